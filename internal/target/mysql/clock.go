package mysql

// ClockQuery is the server's wall clock now, in Unix seconds
// (target.ServerClock), to the microsecond.
func (t *Target) ClockQuery() string {
	return "SELECT UNIX_TIMESTAMP(SYSDATE(6))"
}
