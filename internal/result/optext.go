package result

// OpTextKey is the summary.extra key under which a workload records an
// operation's text (a script statement's first line), so that tables of
// the operations can show what each one ran.
func OpTextKey(op string) string { return "op_text:" + op }
