# bench/medians.awk: functions the bench scripts' summaries share; each
# script puts this text before its own awk program.

# median LIST: the median of the space-separated numbers in LIST.
function median(list,    a, n, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j] + 0 < a[j-1] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# add ARR K V: appends V to the list ARR[K].
function add(arr, k, v) { arr[k] = (k in arr) ? arr[k] " " v : v }
