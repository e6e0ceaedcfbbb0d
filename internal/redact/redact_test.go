package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

// realistic is a result as a run on a colleague's server would record it,
// with everything personal that can end up in one.
func realistic() *result.Result {
	return &result.Result{
		SchemaVersion: 1,
		ID:            "0b7e3f2a-5c1d-4e8f-9a6b-2c3d4e5f6a7b",
		Command: []string{"dbmark", "run", "oltp_read_write", "--target", "mysql://alice:xxxxx@db1.corp.example.com:3306/sbtest",
			"--json", "/home/alice/results/run1.json"},
		Workload: result.Workload{Name: "oltp_read_write", Options: map[string]string{"tables": "4", "table-size": "100000"}},
		Target: result.Target{
			Kind: "mysql", URL: "mysql://alice:xxxxx@db1.corp.example.com:3306/sbtest", Engine: "MariaDB", Version: "10.11.6-MariaDB",
			DataDir: "/home/alice/mariadb/data/",
			Settings: map[string]string{
				"hostname": "db1", "report_host": "db1.corp.example.com", "bind_address": "10.20.30.40",
				"server_uuid": "6f1c9a8e-1234-11ef-9c3b-0242ac120002", "log_bin_basename": "/home/alice/mariadb/data/db1-bin",
				"wsrep_cluster_address": "gcomm://10.20.30.41,10.20.30.42", "innodb_buffer_pool_size": "134217728",
				"init_connect": "SET @token=abc123secret", "general_log_file": "/root/db1.log",
			},
			EngineFacts: &result.EngineFacts{NonDefault: map[string]result.NonDefault{
				"report_host": {Value: "db1.corp.example.com", Default: ""},
			}},
		},
		Environment: &result.Environment{
			Hostname: "db1.corp.example.com", OS: "linux", Kernel: "6.1.0-18-amd64", CPUModel: "Intel(R) Xeon(R) Gold 6240R CPU @ 2.40GHz",
			MachineFacts: &result.MachineFacts{
				ProductName: "SYS-1029P-WTR", SystemVendor: "Supermicro",
				Mounts: []result.Mount{{Role: "working_dir", Path: "/home/alice/bench", MountPoint: "/home", Device: "/dev/sdc1", FSType: "ext4"},
					{Role: "data_dir", Path: "/srv/nfs", MountPoint: "/srv/nfs", Device: "10.20.30.50:/export/db1", FSType: "nfs4",
						Options: []string{"addr=10.20.30.50", "clientaddr=fe80::1c2b:3aff:fe4d:5e6f"}}},
				Unknown: map[string]string{"dmi": "no permission: open /sys/class/dmi/id/product_serial", "nic": "eth0 at 52:54:00:12:34:56"},
			},
		},
		Warnings: []string{"little free disk for the data dir /home/alice/mariadb/data: 2.0 GiB free on /home"},
		Error:    "connect to MySQL at db1.corp.example.com:3306: access denied for user \"alice\" (password=hunter2)",
	}
}

func TestNothingPersonalSurvives(t *testing.T) {
	in := realistic()
	out, err := Result(in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	doc := string(b)
	for _, personal := range []string{
		"db1", "corp.example.com", "alice", "10.20.30.", "fe80::", "52:54:00", "6f1c9a8e", "hunter2", "abc123secret", "/root/",
		"/home", "mariadb/data", "/srv/nfs", "/export",
	} {
		if strings.Contains(doc, personal) {
			t.Errorf("%q survived redaction:\n%s", personal, doc)
		}
	}
	// What is not personal stays: the numbers' context is the point.
	for _, kept := range []string{
		"0b7e3f2a-5c1d-4e8f-9a6b-2c3d4e5f6a7b", "sbtest", "MariaDB", "10.11.6-MariaDB", "6.1.0-18-amd64", "Xeon(R) Gold 6240R",
		"SYS-1029P-WTR", `"innodb_buffer_pool_size":"134217728"`, "nfs4", "ext4", "oltp_read_write", `"device":"/dev/sdc1"`,
		"open /sys/class/dmi/id/product_serial", "data dir (redacted): 2.0 GiB",
	} {
		if !strings.Contains(doc, kept) {
			t.Errorf("%q was lost:\n%s", kept, doc)
		}
	}
	if in.Environment.Hostname != "db1.corp.example.com" || in.Target.Settings["bind_address"] != "10.20.30.40" {
		t.Error("Result changed its input")
	}
}

// A 64-bit seed survives redaction digit for digit.
func TestSeedKeepsItsDigits(t *testing.T) {
	r := realistic()
	r.Seed = 7050402495234225528
	out, err := Result(r)
	if err != nil {
		t.Fatal(err)
	}
	if out.Seed != r.Seed {
		t.Fatalf("seed %d after redaction, want %d", out.Seed, r.Seed)
	}
}

func TestFindAgreesWithResult(t *testing.T) {
	r := &result.Result{
		Target:      result.Target{Kind: "postgres", URL: "postgres://alice:pw@db.example.com:5432/bench", Engine: "PostgreSQL"},
		Command:     []string{"dbmark", "run", "--target", "postgres://bob@127.0.0.1:5432/x", "http://[::1]:8080/r/abc", "http://10.1.1.1/"},
		Environment: &result.Environment{Hostname: "box.example.com", Kernel: "6.1"},
		Warnings:    []string{"the host is busy", "data in /home/alice/pg"},
	}
	f, err := Find(r)
	if err != nil {
		t.Fatal(err)
	}
	if f != "command[3]" {
		t.Errorf("Find = %q, want command[3]", f)
	}
	red, err := Result(r)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := Find(red); err != nil || f != "" {
		t.Errorf("Find on a redacted result = %q, %v; want nothing", f, err)
	}
	red.Warnings = append(red.Warnings, "connected to 10.1.2.3")
	if f, _ := Find(red); f != "warnings[2]" {
		t.Errorf("Find = %q, want warnings[2]", f)
	}
}

// TestRedactedIsFound checks that redaction is idempotent on a realistic
// result: what Result leaves, Find accepts (the site's check would refuse
// a client's own redaction otherwise).
func TestRedactedIsFound(t *testing.T) {
	r := realistic()
	if f, _ := Find(r); f == "" {
		t.Fatal("Find sees nothing personal in the realistic result")
	}
	red, err := Result(r)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := Find(red); err != nil || f != "" {
		b, _ := json.Marshal(red)
		t.Errorf("Find on the redacted result = %q, %v\n%s", f, err, b)
	}
}

// TestPathsAreDropped holds every kind of path a result records, outside
// any home directory: each is gone after redaction, and what it says that
// is not a place (a file's name, the file system) stays.
func TestPathsAreDropped(t *testing.T) {
	r := &result.Result{
		SchemaVersion: 1,
		Command: []string{"dbmark", "run", "tpcb", "-f", "/srv/bench/scripts/mine.sql@2", "--file=/srv/bench/scripts/other.sql",
			"--json", "/var/tmp/results/r1.json", "--store=/data/dbmark/results.db", "--target",
			"postgres://bench@/bench?host=/var/run/pg-17/sock&sslrootcert=/etc/ssl/corp/ca.crt"},
		Workload: result.Workload{Name: "tpcb", Options: map[string]string{
			"file": "[/srv/bench/scripts/mine.sql@2,/srv/bench/scripts/other.sql]", "dir": "/mnt/fast/fileio", "scale": "10"}},
		Target: result.Target{Kind: "postgres", URL: "postgres://bench@/bench?host=/var/run/pg-17/sock", Engine: "PostgreSQL",
			DataDir: "/srv/pg/17/main",
			Settings: map[string]string{
				// PostgreSQL's
				"data_directory": "/srv/pg/17/main", "config_file": "/etc/postgresql/17/main/postgresql.conf",
				"hba_file": "/etc/postgresql/17/main/pg_hba.conf", "ident_file": "/etc/postgresql/17/main/pg_ident.conf",
				"unix_socket_directories": "/var/run/pg-17/sock, /tmp/pgsock", "external_pid_file": "/var/run/postgresql/17-main.pid",
				"log_directory": "/var/log/pgcluster", "ssl_crl_file": "/etc/ssl/corp/crl.pem",
				// MariaDB's
				"datadir": "/srv/mysql/", "socket": "/run/mysqld/mysqld.sock", "pid_file": "/run/mysqld/mysqld.pid",
				"log_error": "./mysqld.err", "slow_query_log_file": "/var/log/mysql/slow.log", "tmpdir": "/scratch/tmp",
				"basedir": "/opt/mariadb-11/", "innodb_log_group_home_dir": "../logs/innodb",
				// fileio's target: its directory's file system
				"mount_point": "/mnt/fast", "mount_options": "rw,noatime,upperdir=/var/lib/containers/abc/diff", "fs_type": "xfs",
				"device": "/dev/nvme0n1p1",
			},
		},
		Environment: &result.Environment{OS: "linux", MachineFacts: &result.MachineFacts{Mounts: []result.Mount{
			{Role: "working_dir", Path: "/srv/bench/work", MountPoint: "/srv", Device: "/dev/mapper/vg0-srv", FSType: "ext4"},
			{Role: "data_dir", Path: "/srv/pg/17/main", MountPoint: "/", Device: "/dev/vda1", FSType: "xfs"}}}},
		Warnings: []string{"the data directory /srv/pg/17/main is on a rotating disk.", "fsync is off in ~/pg.conf"},
		Error:    "script /srv/bench/scripts/mine.sql:3:5: syntax error",
		Summary:  result.Summary{Extra: map[string]string{"script 1": "/srv/bench/scripts/mine.sql"}},
	}
	out, err := Result(r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	doc := string(b)
	for _, place := range []string{"/srv", "/etc/", "/var/", "/tmp/", "/run/", "/scratch", "/opt/", "/data/", "/mnt",
		"./mysqld.err", "../logs", "~/", "pg-17", "corp", "17/main", "mariadb-11", "containers"} {
		if strings.Contains(doc, place) {
			t.Errorf("%q survived redaction:\n%s", place, doc)
		}
	}
	for _, kept := range []string{`"(redacted)/mine.sql@2"`, `"--file=(redacted)/other.sql"`, `"(redacted)/r1.json"`,
		`"[(redacted)/mine.sql@2,(redacted)/other.sql]"`, `"dir":"(redacted)"`, `"data_dir":"(redacted)"`,
		`"config_file":"(redacted)/postgresql.conf"`, `"hba_file":"(redacted)/pg_hba.conf"`, `"socket":"(redacted)/mysqld.sock"`,
		`"unix_socket_directories":"(redacted), (redacted)"`, `"mount_point":"/"`, `"fs_type":"xfs"`, `"device":"/dev/nvme0n1p1"`,
		`"device":"/dev/mapper/vg0-srv"`, `"mount_options":"rw,noatime,upperdir=(redacted)"`, "rotating disk.",
		"script (redacted)/mine.sql:3:5: syntax error", "host=%28redacted%29", "sslrootcert=%28redacted%29%2Fca.crt",
	} {
		if !strings.Contains(doc, kept) {
			t.Errorf("%s is not in the redacted document:\n%s", kept, doc)
		}
	}
	// The server's check agrees: the original holds a path, the redacted
	// document none.
	if f, _ := Find(r); f == "" {
		t.Error("Find sees no path in the original")
	}
	if f, err := Find(out); err != nil || f != "" {
		t.Errorf("Find on the redacted document = %q, %v", f, err)
	}
	for field, doc := range map[string]*result.Result{
		"target.data_dir":                   {Target: result.Target{DataDir: "/srv/pg"}},
		"target.settings.socket":            {Target: result.Target{Settings: map[string]string{"socket": "/run/mysqld/mysqld.sock"}}},
		"command[1]":                        {Command: []string{"-f", "/opt/x.sql"}},
		"environment.mounts[0].mount_point": {Environment: &result.Environment{MachineFacts: &result.MachineFacts{Mounts: []result.Mount{{MountPoint: "/mnt/db", FSType: "ext4"}}}}},
		"target.url":                        {Target: result.Target{URL: "sqlite:///var/lib/bench/b.db"}},
	} {
		if f, err := Find(doc); err != nil || f != field {
			t.Errorf("Find = %q, %v; want %s", f, err, field)
		}
	}
	// Units and words with a slash are not paths, ranges and times are not
	// addresses.
	for _, v := range []string{"/s", "MiB/s", "GNU/Linux", "read/write", "/", "N/A", "1/2", "<b>x</b>", "<circle r=1 />",
		"10:20:10", "--time=10s:60s:10s", "12:30:45", "1:2:3:4"} {
		if got := (&scrubber{}).String(v); got != v {
			t.Errorf("%q redacted to %q", v, got)
		}
	}
}

// A service account's name (postgres, root) names no person: it stays, and
// so do the target's kind and settings that hold the same word. A person's
// user name goes.
func TestServiceAccountsStay(t *testing.T) {
	r := &result.Result{SchemaVersion: 1, Target: result.Target{Kind: "postgres", URL: "postgres://postgres@db.example.com:5432/postgres", Engine: "PostgreSQL",
		Settings: map[string]string{"search_path": `"$user", public`, "role": "postgres"}}}
	got, err := Result(r)
	if err != nil {
		t.Fatal(err)
	}
	if got.Target.Kind != "postgres" || got.Target.Settings["role"] != "postgres" {
		t.Errorf("kind %q, role %q: a service account's name was taken for a person's", got.Target.Kind, got.Target.Settings["role"])
	}
	r.Target.URL = "postgres://alice@db.example.com:5432/bench"
	r.Target.Settings["role"] = "alice"
	if got, err = Result(r); err != nil {
		t.Fatal(err)
	}
	if got.Target.Kind != "postgres" || got.Target.Settings["role"] == "alice" {
		t.Errorf("kind %q, role %q: a person's user name must go, the kind stay", got.Target.Kind, got.Target.Settings["role"])
	}
}

// TestClusterNodesAreRedacted: a run on a cluster names its other nodes
// in servers; their host and user names go wherever they stand, as the
// first's do.
func TestClusterNodesAreRedacted(t *testing.T) {
	in := realistic()
	in.Servers = []result.Server{
		{Label: "server1", Target: in.Target},
		{Label: "server2", Target: result.Target{Kind: "mysql", URL: "mysql://bob:xxxxx@db2node.corp.example.com:3306/sbtest",
			DataDir: "/home/bob/data", Settings: map[string]string{"wsrep_node_name": "db2node"}}},
	}
	in.Warnings = append(in.Warnings, "db2node.corp.example.com answered slowly; ask bob")
	out, err := Result(in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	for _, personal := range []string{"db2node", "bob", "/home"} {
		if strings.Contains(string(b), personal) {
			t.Errorf("%q survived redaction:\n%s", personal, b)
		}
	}
	if len(out.Servers) != 2 || out.Servers[1].Label != "server2" {
		t.Errorf("servers %+v", out.Servers)
	}
}
