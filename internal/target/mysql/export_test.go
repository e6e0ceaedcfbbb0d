package mysql

import "github.com/dbmark/dbmark/internal/target"

// DriverOnly keeps tg's statements on the driver's path (as TLS does).
func DriverOnly(tg target.Target) { tg.(*Target).driverOnly = true }

// OnWire says whether c's statements go on the wire.
func OnWire(c target.Conn) bool { return c.(*Conn).w != nil }
