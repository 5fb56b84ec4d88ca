module github.com/jinzhu/inflection
