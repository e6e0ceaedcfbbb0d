// Package errclass names what a run does about an error a client met. The
// engines classify their own errors into it; the runner acts on the class
// alone, so it needs to know nothing of any engine or of SQL.
package errclass

// Class is what to do about an error.
type Class int

const (
	// Fatal errors end the run unless ignored.
	Fatal Class = iota
	// Retryable errors (serialization failure, deadlock, lock wait timeout,
	// SQLITE_BUSY) end the transaction and try it again.
	Retryable
	// Reconnect errors mean the connection is lost: open a new one.
	Reconnect
	// Canceled means the run's context ended; it is not an error of the run.
	Canceled
)

func (c Class) String() string {
	switch c {
	case Retryable:
		return "retryable"
	case Reconnect:
		return "reconnect"
	case Canceled:
		return "canceled"
	}
	return "fatal"
}

// Info is an error's class and its code (a SQLSTATE, a vendor's error
// number, an errno's name).
type Info struct {
	Class Class
	Code  string
}

// fullCodes are the errors of a full disk or table: SQLITE_FULL, MySQL's
// ER_RECORD_FILE_FULL and ER_DISK_FULL, PostgreSQL's disk_full.
var fullCodes = map[string]bool{"SQLITE_13": true, "1114": true, "1021": true, "53100": true}

// Full reports whether code is the error of a full disk or table: not one
// to ignore, since every event after it fails the same way until there is
// room.
func Full(code string) bool { return fullCodes[code] }
