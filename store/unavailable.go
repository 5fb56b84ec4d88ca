package store

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// unavailable marks err as domain.ErrUnavailable, with its reason, when it
// says the database cannot take requests for now — its disk is full, it
// cannot be reached, it is shutting down — so every caller answers 503
// with the reason rather than a bare 500. Any other error is returned as
// it is.
func unavailable(err error) error {
	if err == nil || errors.Is(err, domain.ErrUnavailable) {
		return err
	}
	if reason := unavailableReason(err); reason != "" {
		return &domain.UnavailableError{Reason: reason, Err: err}
	}
	return err
}

func unavailableReason(err error) string {
	if sqliteFull(err) || errors.Is(err, syscall.ENOSPC) {
		return "the database's disk is full"
	}
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch {
		case pe.Code == "53100":
			return "the database's disk is full"
		case pe.Code == "57P01" || pe.Code == "57P02":
			return "the database server is shutting down"
		case pe.Code == "57P03":
			return "the database server is starting up"
		case strings.HasPrefix(pe.Code, "08"):
			return "the connection to the database failed"
		case strings.HasPrefix(pe.Code, "53"):
			return "the database server is out of resources"
		}
		return ""
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return "the database cannot be reached"
	}
	if _, ok := errors.AsType[*net.OpError](err); ok || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed) {
		return "the connection to the database failed"
	}
	return ""
}

// markUnavailable is a GORM callback after every statement, so reads,
// which return GORM's errors as they come, are marked too.
func markUnavailable(db *gorm.DB) {
	if db.Error != nil {
		db.Error = unavailable(db.Error)
	}
}

// watchUnavailable registers markUnavailable after each kind of
// statement GORM runs.
func watchUnavailable(db *gorm.DB) error {
	cb := db.Callback()
	for name, err := range map[string]error{
		"query":  cb.Query().After("gorm:query").Register("helix:unavailable", markUnavailable),
		"row":    cb.Row().After("gorm:row").Register("helix:unavailable", markUnavailable),
		"raw":    cb.Raw().After("gorm:raw").Register("helix:unavailable", markUnavailable),
		"create": cb.Create().After("gorm:create").Register("helix:unavailable", markUnavailable),
		"update": cb.Update().After("gorm:update").Register("helix:unavailable", markUnavailable),
		"delete": cb.Delete().After("gorm:delete").Register("helix:unavailable", markUnavailable),
	} {
		if err != nil {
			return fmt.Errorf("register the %s callback: %w", name, err)
		}
	}
	return nil
}
