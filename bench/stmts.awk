# bench/stmts.awk: for queries.sh, the query label of a statement a server
# logged. The caller sets map, a file of "label<TAB>statement" lines (the
# suite's statements, one line each), and puts this text before its own
# awk program.

# Two queries may be the same statement (the paper's 3 and 8, a selection
# whose result goes to the screen in one): a text's label is the first
# query's that has it, canon[label] the label its text stands under.
BEGIN {
	while ((getline stmts_line < map) > 0) {
		stmts_i = index(stmts_line, "\t")
		stmts_s = norm(substr(stmts_line, stmts_i + 1))
		stmts_l = substr(stmts_line, 1, stmts_i - 1)
		if (!(stmts_s in label_of)) label_of[stmts_s] = stmts_l
		canon[stmts_l] = label_of[stmts_s]
	}
	close(map)
}

# norm S: S without leading blanks, or trailing blanks and semicolons (a
# client sends a statement without its terminating ;).
function norm(s) {
	sub(/^[ \t]+/, "", s)
	sub(/[; \t\r]+$/, "", s)
	return s
}

# lookup S: the label (canonical) of statement S, or "" when S is not one of the suite's.
function lookup(s) {
	s = norm(s)
	return (s in label_of) ? label_of[s] : ""
}
