package store

import "gorm.io/gorm"

// warmRows are the row types a server's start and first requests read,
// in about the order they first do, then the rest.
var warmRows = []any{
	&streamRow{}, &settingRow{}, &epochRow{}, &tokenRow{}, &workerRow{}, &grantRow{}, &skillRow{}, &mcpServerRow{},
	&taskRow{}, &eventRow{}, &activationRow{}, &triggerRow{}, &callRow{}, &orgRoleRow{}, &subscriptionRow{},
	&deliveryRow{}, &budgetRow{}, &approvalRow{}, &positionRow{}, &roleRow{}, &activationStreamRow{},
}

// warmSchemas parses the row types' GORM schemas in the background: GORM
// parses a type by reflection on its first use, and at start-up those
// first uses would all queue on the one goroutine that opens the store
// and answers the first request. GORM's schema cache is safe to fill
// concurrently; a use that meets a parse under way waits for it.
func warmSchemas(db *gorm.DB) {
	s := db.Session(&gorm.Session{NewDB: true, SkipHooks: true})
	for _, r := range warmRows {
		st := &gorm.Statement{DB: s}
		_ = st.Parse(r) // a bad type fails again, with its error, where it is used
	}
}
