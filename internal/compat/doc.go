// Package compat holds tests that run the peers themselves: the real
// sysbench binary next to dbmark, against the same servers, to check that
// dbmark's sysbench-compatible workloads create the same schema and issue
// the same statements per transaction. The tests skip when the peer binary
// or the test databases (scripts/testenv.sh) are missing.
package compat
