package htmlreport

// FindingRun is a made-up run with findings of every kind and counters that
// moved and stayed flat, for the browser tests.
var FindingRun = findingRun
