package postgres

// ClockQuery is the server's wall clock now, in Unix seconds
// (target.ServerClock): clock_timestamp(), not the transaction's start.
func (t *Target) ClockQuery() string {
	return "SELECT extract(epoch FROM clock_timestamp())::text"
}
