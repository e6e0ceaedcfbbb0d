package result

// MachineFacts are the machine's facts beyond the basics in Environment.
// Every fact is either a value or named in Unknown with the reason it could
// not be read: a missing fact never fails a run.
type MachineFacts struct {
	Sockets        int      `json:"sockets,omitempty"`
	Cores          int      `json:"cores,omitempty"` // physical cores over all sockets
	CPUFlags       []string `json:"cpu_flags,omitempty"`
	CPUMHz         float64  `json:"cpu_mhz,omitempty"`     // the highest current frequency over the CPUs
	CPUMaxMHz      float64  `json:"cpu_max_mhz,omitempty"` // cpufreq's maximum
	Governor       string   `json:"governor,omitempty"`    // cpufreq scaling governor ("mixed: ..." when CPUs differ)
	SwapBytes      uint64   `json:"swap_bytes,omitempty"`
	SwapUsedBytes  uint64   `json:"swap_used_bytes,omitempty"`
	Distribution   string   `json:"distribution,omitempty"`
	Virtualization string   `json:"virtualization,omitempty"` // "none", a hypervisor ("kvm", "xen"...)
	Container      string   `json:"container,omitempty"`      // "docker", "podman", "lxc", "kubernetes"...
	SystemVendor   string   `json:"system_vendor,omitempty"`  // DMI sys_vendor
	ProductName    string   `json:"product_name,omitempty"`   // DMI product_name: the cloud instance type on most clouds
	InstanceType   string   `json:"instance_type,omitempty"`
	THP            string   `json:"transparent_hugepages,omitempty"`
	THPDefrag      string   `json:"transparent_hugepages_defrag,omitempty"`
	Disks          []Disk   `json:"disks,omitempty"`
	NICs           []NIC    `json:"nics,omitempty"`
	RAID           []RAID   `json:"raid,omitempty"`
	LVM            []LV     `json:"lvm,omitempty"`
	Mounts         []Mount  `json:"mounts,omitempty"`
	// ProbeMS is how long collecting the facts took.
	ProbeMS float64 `json:"probe_ms,omitempty"`
	// Unknown maps a fact to the reason it could not be read.
	Unknown map[string]string `json:"unknown,omitempty"`
}

// Disk is one block device (not a partition).
type Disk struct {
	Name       string `json:"name"`
	Model      string `json:"model,omitempty"`
	SizeBytes  uint64 `json:"size_bytes,omitempty"`
	Rotational *bool  `json:"rotational,omitempty"`
	Scheduler  string `json:"scheduler,omitempty"`
	QueueDepth uint64 `json:"nr_requests,omitempty"`
	ReadAheadK uint64 `json:"read_ahead_kb,omitempty"`
}

// NIC is one network interface (loopback apart).
type NIC struct {
	Name string `json:"name"`
	// SpeedMbps is the link speed the driver reports, in Mbit/s; 0 when
	// it reports none (most virtual NICs).
	SpeedMbps uint64 `json:"speed_mbps,omitempty"`
	State     string `json:"state,omitempty"` // operstate: up, down, unknown
}

// RAID is one Linux software RAID (md) array.
type RAID struct {
	Name       string   `json:"name"`
	Level      string   `json:"level"`
	ChunkBytes uint64   `json:"chunk_bytes,omitempty"`
	Members    []string `json:"members,omitempty"`
	State      string   `json:"state,omitempty"`
	SyncAction string   `json:"sync_action,omitempty"` // idle, check, resync, recover, repair...
	// SyncDone is the fraction (0 to 1) of the running sync action.
	SyncDone float64 `json:"sync_done,omitempty"`
	Degraded uint64  `json:"degraded,omitempty"`
}

// LV is one device-mapper device (LVM logical volume, dm-crypt...).
type LV struct {
	Device string   `json:"device"` // dm-0
	Name   string   `json:"name"`   // vg-lv
	Slaves []string `json:"slaves,omitempty"`
}

// Mount is where a directory the run uses lives.
type Mount struct {
	Role       string   `json:"role"` // "working_dir", "data_dir"
	Path       string   `json:"path"`
	MountPoint string   `json:"mount_point"`
	Device     string   `json:"device"`
	FSType     string   `json:"fs_type"`
	Options    []string `json:"options,omitempty"`
	FreeBytes  uint64   `json:"free_bytes,omitempty"`
	TotalBytes uint64   `json:"total_bytes,omitempty"`
	// UsedBytes is what the files under Path take on disk (the data
	// directory only).
	UsedBytes uint64 `json:"used_bytes,omitempty"`
}

// EngineFacts are what the engine says about itself beyond its settings.
type EngineFacts struct {
	// NonDefault lists the settings whose value differs from the engine's
	// compiled-in default, with that default.
	NonDefault map[string]NonDefault `json:"non_default,omitempty"`
	// Sizes are the settings that matter most for performance, in bytes
	// where they are sizes (buffer pool, shared_buffers, log files) and as
	// the engine states them otherwise (flush method, checkpoint timeout).
	Sizes map[string]string `json:"sizes,omitempty"`
	// CacheBytes is the engine's main cache (InnoDB buffer pool,
	// shared_buffers, SQLite's page cache per connection).
	CacheBytes uint64 `json:"cache_bytes,omitempty"`
	// DataBytes is the size of the data as the engine reports it.
	DataBytes uint64 `json:"data_bytes,omitempty"`
}

// NonDefault is a setting that differs from its default.
type NonDefault struct {
	Value   string `json:"value"`
	Default string `json:"default"`
	Source  string `json:"source,omitempty"` // where the value comes from, when the engine says
}
