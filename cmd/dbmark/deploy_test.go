package main

// The Kubernetes recipe in deploy/kubernetes (docs/scale-out.md), tested
// as far as a machine without a cluster allows: the manifests built by
// kubectl's kustomize and read back by a client-side dry run, checked on
// what matters, and the pods' own scripts run with this dbmark.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// k8sObject is what the tests read of a Kubernetes object.
type k8sObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
	Spec struct {
		CompletionMode string   `json:"completionMode"`
		Completions    *int     `json:"completions"`
		Parallelism    *int     `json:"parallelism"`
		BackoffLimit   *int     `json:"backoffLimit"`
		AccessModes    []string `json:"accessModes"`
		Template       struct {
			Spec struct {
				RestartPolicy string         `json:"restartPolicy"`
				Containers    []k8sContainer `json:"containers"`
				Volumes       []struct {
					Name                  string `json:"name"`
					PersistentVolumeClaim *struct {
						ClaimName string `json:"claimName"`
					} `json:"persistentVolumeClaim"`
				} `json:"volumes"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

type k8sContainer struct {
	Image   string   `json:"image"`
	Command []string `json:"command"`
	Args    []string `json:"args"`
	Env     []struct {
		Name      string `json:"name"`
		Value     string `json:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct{ Name, Key string } `json:"secretKeyRef"`
			FieldRef     *struct {
				FieldPath string `json:"fieldPath"`
			} `json:"fieldRef"`
		} `json:"valueFrom"`
	} `json:"env"`
	EnvFrom []struct {
		ConfigMapRef *struct{ Name string } `json:"configMapRef"`
	} `json:"envFrom"`
	VolumeMounts []struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
	} `json:"volumeMounts"`
}

// script is the shell script a container runs (sh -c SCRIPT).
func (c k8sContainer) script(t *testing.T) string {
	t.Helper()
	if !slices.Equal(c.Command, []string{"/bin/sh", "-c"}) || len(c.Args) != 1 {
		t.Fatalf("the container runs %q %q, not one script of /bin/sh -c", c.Command, c.Args)
	}
	return c.Args[0]
}

// mountsResults checks that the pod mounts the results claim at /results.
func (o k8sObject) mountsResults(t *testing.T) {
	t.Helper()
	pod := o.Spec.Template.Spec
	if len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim == nil || pod.Volumes[0].PersistentVolumeClaim.ClaimName != "dbmark-results" {
		t.Fatalf("%s: volumes %+v, want the claim dbmark-results", o.Metadata.Name, pod.Volumes)
	}
	m := pod.Containers[0].VolumeMounts
	if len(m) != 1 || m[0].Name != pod.Volumes[0].Name || m[0].MountPath != "/results" {
		t.Fatalf("%s: mounts %+v, want the results volume at /results", o.Metadata.Name, m)
	}
}

// checkEnv checks that the container takes its settings from exactly
// these ConfigMaps, and its secret and its index as the recipe says.
func (c k8sContainer) checkEnv(t *testing.T, job string, configMaps []string, index bool) {
	t.Helper()
	var from []string
	for _, e := range c.EnvFrom {
		if e.ConfigMapRef == nil {
			t.Fatalf("%s: envFrom %+v is not a ConfigMap", job, e)
		}
		from = append(from, e.ConfigMapRef.Name)
	}
	if !slices.Equal(from, configMaps) {
		t.Fatalf("%s: settings from %v, want %v", job, from, configMaps)
	}
	var names []string
	for _, e := range c.Env {
		names = append(names, e.Name)
		switch {
		case e.Name == "DBMARK_TARGET":
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || *e.ValueFrom.SecretKeyRef != (struct{ Name, Key string }{"dbmark-target", "url"}) {
				t.Fatalf("%s: DBMARK_TARGET is not the Secret dbmark-target's url", job)
			}
		case e.Name == "JOB_COMPLETION_INDEX" && index:
			if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
				t.Fatalf("%s: JOB_COMPLETION_INDEX is not the pod's completion index", job)
			}
		default:
			// START_AT above all: one instant, from one ConfigMap, for every pod.
			t.Fatalf("%s: an environment variable %s of its own", job, e.Name)
		}
	}
	want := []string{"DBMARK_TARGET"}
	if index {
		want = []string{"JOB_COMPLETION_INDEX", "DBMARK_TARGET"}
	}
	if job == "dbmark-merge" {
		want = nil
	}
	if !slices.Equal(names, want) {
		t.Fatalf("%s: environment %v, want %v", job, names, want)
	}
}

// kubectlObjects builds a kustomization with kubectl's kustomize and reads
// it back with a client-side dry run (kubectl label --local: no cluster
// is asked), as JSON.
func kubectlObjects(t *testing.T, kubectl, dir string) map[string]k8sObject {
	t.Helper()
	env := append(os.Environ(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	build := exec.Command(kubectl, "kustomize", dir)
	build.Env = env
	yaml, err := build.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderrOf(err))
	}
	dry := exec.Command(kubectl, "label", "--local", "--dry-run=client", "-o", "json", "-f", "-", "app.kubernetes.io/part-of=dbmark")
	dry.Env, dry.Stdin = env, bytes.NewReader(yaml)
	out, err := dry.Output()
	if err != nil {
		t.Fatalf("kubectl label --local --dry-run=client: %v\n%s", err, stderrOf(err))
	}
	// Objects one after another (kubectl 1.20), or a List of them.
	var raws []json.RawMessage
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var list struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("kubectl's JSON: %v", err)
		}
		if json.Unmarshal(raw, &list); list.Kind == "List" {
			raws = append(raws, list.Items...)
		} else {
			raws = append(raws, raw)
		}
	}
	objs := map[string]k8sObject{}
	withPassword := regexp.MustCompile(`://[^/"@\s]*:[^/"@\s]*@`)
	for _, raw := range raws {
		// No URL with a password anywhere in what the recipe applies.
		if withPassword.Match(raw) {
			t.Fatalf("a URL with a password in %s", raw)
		}
		var o k8sObject
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatal(err)
		}
		objs[o.Kind+"/"+o.Metadata.Name] = o
	}
	return objs
}

func stderrOf(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}

// copyDir copies the regular files of src, and of its directories, to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestKubernetesRecipe(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "DBMARK_TEST_KUBECTL", "kubectl")
	// The recipe as a user applies it: one instant written into start.env.
	dir := t.TempDir()
	copyDir(t, filepath.Join("..", "..", "deploy", "kubernetes"), dir)
	at := time.Now().Add(6 * time.Second).UTC().Truncate(time.Second)
	if err := os.WriteFile(filepath.Join(dir, "config", "start.env"), []byte("START_AT="+at.Format(time.RFC3339)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	objs := kubectlObjects(t, kubectl, dir)
	prep := kubectlObjects(t, kubectl, filepath.Join(dir, "prepare"))

	settings, start := objs["ConfigMap/dbmark-run"].Data, objs["ConfigMap/dbmark-start"].Data
	if start["START_AT"] != at.Format(time.RFC3339) || len(start) != 1 {
		t.Fatalf("ConfigMap dbmark-start: %v, want START_AT=%s alone", start, at.Format(time.RFC3339))
	}
	hosts, err := strconv.Atoi(settings["HOSTS"])
	if err != nil || hosts < 2 {
		t.Fatalf("ConfigMap dbmark-run: HOSTS %q", settings["HOSTS"])
	}
	if pvc := objs["PersistentVolumeClaim/dbmark-results"]; !slices.Equal(pvc.Spec.AccessModes, []string{"ReadWriteMany"}) {
		t.Fatalf("the results claim: access %v, want ReadWriteMany (every pod mounts it at once)", pvc.Spec.AccessModes)
	}
	run, merge, prepare := objs["Job/dbmark-run"], objs["Job/dbmark-merge"], prep["Job/dbmark-prepare"]
	if run.Spec.CompletionMode != "Indexed" || run.Spec.Completions == nil || run.Spec.Parallelism == nil ||
		*run.Spec.Completions != hosts || *run.Spec.Parallelism != hosts {
		t.Fatalf("Job dbmark-run: mode %q, completions %v, parallelism %v; want Indexed, %d pods at once (HOSTS)",
			run.Spec.CompletionMode, run.Spec.Completions, run.Spec.Parallelism, hosts)
	}
	if run.Spec.BackoffLimit == nil || *run.Spec.BackoffLimit != 0 || run.Spec.Template.Spec.RestartPolicy != "Never" {
		t.Fatal("Job dbmark-run retries a pod: a second try would start after the instant")
	}
	for _, j := range []k8sObject{run, merge, prepare} {
		if c := j.Spec.Template.Spec.Containers; len(c) != 1 || c[0].Image != "registry.example/dbmark:dev" {
			t.Fatalf("%s: containers %+v, want one of the image kustomize names", j.Metadata.Name, c)
		}
	}
	run.mountsResults(t)
	merge.mountsResults(t)
	runC, mergeC, prepC := run.Spec.Template.Spec.Containers[0], merge.Spec.Template.Spec.Containers[0], prepare.Spec.Template.Spec.Containers[0]
	runC.checkEnv(t, "dbmark-run", []string{"dbmark-run", "dbmark-start"}, true)
	mergeC.checkEnv(t, "dbmark-merge", []string{"dbmark-run", "dbmark-start"}, false)
	prepC.checkEnv(t, "dbmark-prepare", []string{"dbmark-run"}, false)

	// The pods' scripts, run here with this dbmark on an SQLite file:
	// the results volume is a directory, the Secret a variable.
	bin := buildDbmark(t)
	work := t.TempDir()
	results := filepath.Join(work, "results")
	base := []string{"PATH=" + filepath.Dir(bin) + ":" + os.Getenv("PATH"), "DBMARK_HOME=" + work, "DBMARK_STORE=",
		"DBMARK_TARGET=sqlite://" + filepath.Join(work, "bench.db")}
	for k, v := range settings {
		switch k {
		case "OPTIONS":
			v = "--table-size 1000"
		case "RUN_OPTIONS":
			v = "--threads 1 --time 2s --warmup 1s"
		case "MERGE_WAIT_SECONDS":
			v = "30"
		}
		base = append(base, k+"="+v)
	}
	pod := func(c k8sContainer, env ...string) *exec.Cmd {
		cmd := exec.Command("/bin/sh", "-c", strings.ReplaceAll(c.script(t), `"/results/`, `"`+results+"/"))
		cmd.Env = append(slices.Clone(base), env...)
		return cmd
	}
	if out, err := pod(runC, "START_AT=", "JOB_COMPLETION_INDEX=0").CombinedOutput(); err == nil || !strings.Contains(string(out), "START_AT is empty") {
		t.Fatalf("a run without an instant: %v\n%s", err, out)
	}
	if out, err := pod(prepC).CombinedOutput(); err != nil {
		t.Fatalf("the prepare pod: %v\n%s", err, out)
	}
	// The instant the ConfigMap would hold if start.env were written now:
	// the build and the prepare took their time.
	at = time.Now().Add(5 * time.Second).UTC().Truncate(time.Second)
	startAt := "START_AT=" + at.Format(time.RFC3339)
	var wg sync.WaitGroup
	outs, errs := make([][]byte, hosts+1), make([]error, hosts+1)
	for i := range hosts + 1 {
		cmd := pod(runC, startAt, fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
		if i == hosts { // the merge starts with them and waits for their results
			cmd = pod(mergeC, startAt)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil {
			t.Fatalf("pod %d of %d: %v\n%s", i+1, hosts+1, errs[i], outs[i])
		}
	}
	runDir := filepath.Join(results, "run-"+strings.ReplaceAll(at.Format(time.RFC3339), ":", "_"))
	var events int64
	for i := range hosts {
		r := readResult(t, filepath.Join(runDir, fmt.Sprintf("client-%d.json", i)))
		if r.ClientID != fmt.Sprintf("client-%d", i) || r.StartAt == nil || !r.StartAt.At.Equal(at) {
			t.Fatalf("client-%d: client %q, start %+v, want %v", i, r.ClientID, r.StartAt, at)
		}
		events += r.Summary.Events
	}
	m := readResult(t, filepath.Join(runDir, "merged.json"))
	if len(m.Clients) != hosts || m.Summary.Events != events {
		t.Fatalf("merged: %d clients, %d events; want %d, %d", len(m.Clients), m.Summary.Events, hosts, events)
	}
	if !strings.Contains(string(outs[hosts]), fmt.Sprintf("merged from %d hosts", hosts)) {
		t.Fatalf("the merge pod does not show the merged result:\n%s", outs[hosts])
	}
}

// The image cannot be built here (no container engine runs), so what the
// Dockerfile takes from the repository is checked against it: the files
// it copies exist, the chart library lands where the report embeds it
// from (scripts/report-assets.sh), and dbmark is built as `make build`
// builds it (the Makefile's tags).
func TestDockerfileNamesWhatTheRepositoryHas(t *testing.T) {
	root := filepath.Join("..", "..")
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	docker := read("deploy/Dockerfile")
	// A line continued with a backslash is one instruction.
	var instr []string
	for _, l := range strings.Split(strings.ReplaceAll(docker, "\\\n", " "), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			instr = append(instr, l)
		}
	}
	asset := regexp.MustCompile(`(?m)^DEST=(\S+)`).FindStringSubmatch(read("scripts/report-assets.sh"))
	tags := regexp.MustCompile(`(?m)^TAGS\s*:=\s*(\S+)`).FindStringSubmatch(read("Makefile"))
	if asset == nil || tags == nil {
		t.Fatal("no DEST in scripts/report-assets.sh or no TAGS in the Makefile")
	}
	var copied, built bool
	for _, in := range instr {
		f := strings.Fields(in)
		switch {
		case f[0] == "COPY" && strings.HasPrefix(f[1], "--from=assets"):
			if f[len(f)-1] != asset[1] {
				t.Errorf("the chart library goes to %s, the report embeds %s", f[len(f)-1], asset[1])
			}
			copied = true
		case f[0] == "COPY" && !strings.HasPrefix(f[1], "--from="):
			for _, src := range f[1 : len(f)-1] {
				if _, err := os.Stat(filepath.Join(root, src)); err != nil {
					t.Errorf("COPY %s: %v", src, err)
				}
			}
		case f[0] == "RUN" && strings.Contains(in, "go build"):
			if !strings.Contains(in, "-tags "+tags[1]) || !strings.Contains(in, "CGO_ENABLED=1") || !strings.HasSuffix(in, "./cmd/dbmark") {
				t.Errorf("dbmark is not built as make builds it (cgo, -tags %s, ./cmd/dbmark): %s", tags[1], in)
			}
			built = true
		}
	}
	if !copied || !built {
		t.Fatalf("the Dockerfile copies the chart library: %v; builds dbmark: %v", copied, built)
	}
}
