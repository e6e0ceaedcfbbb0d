package result

import "strings"

// ServerSetting is a server setting a run changed (--server-set): what it
// was before dbmark changed it, what it was set to, and what a new
// connection read back before the run (the check that it took effect).
type ServerSetting struct {
	Name     string `json:"name"`
	Original string `json:"original"`
	Set      string `json:"set"`
	ReadBack string `json:"read_back"`
	// Restart: the server was restarted (--restart-cmd) for it to apply.
	Restart bool `json:"restart,omitempty"`
}

// ServerOptionPrefix names a server setting among a run's options and a
// sweep's axes: "server.work_mem". Such an option changes the work, so
// runs are compared, grouped and keyed by it like any other.
const ServerOptionPrefix = "server."

// ServerOption is the option a server setting is recorded under.
func ServerOption(name string) string { return ServerOptionPrefix + name }

// ServerSettingOf is the setting an option names, if it names one.
func ServerSettingOf(option string) (string, bool) {
	return strings.CutPrefix(option, ServerOptionPrefix)
}
