package probe

import (
	"errors"
	"os"
	"slices"
	"strings"
)

// virtualization names the hypervisor (from the CPU's hypervisor flag and
// DMI), the container runtime, and the cloud instance type where DMI states
// it (Amazon EC2 puts it in product_name).
func (c *collector) virtualization() {
	c.dmi()
	c.f.Container = c.container()
	if c.f.Container == "" {
		c.f.Container = "none"
	}
	vendor := strings.ToLower(c.f.SystemVendor + " " + c.f.ProductName)
	hv := ""
	for _, k := range []struct{ match, name string }{
		{"amazon ec2", "kvm (nitro)"}, {"google", "kvm"}, {"qemu", "kvm"}, {"kvm", "kvm"},
		{"microsoft corporation", "hyperv"}, {"vmware", "vmware"}, {"xen", "xen"},
		{"virtualbox", "virtualbox"}, {"innotek", "virtualbox"}, {"openstack", "kvm"},
	} {
		if strings.Contains(vendor, k.match) {
			hv = k.name
			break
		}
	}
	if hv == "" {
		if t, err := c.readTrim("sys", "hypervisor", "type"); err == nil && t != "" {
			hv = t
		}
	}
	if hv == "" && slices.Contains(c.f.CPUFlags, "hypervisor") {
		hv = "unnamed hypervisor"
	}
	switch {
	case hv != "":
		c.f.Virtualization = hv
	case c.e.CPUModel != "":
		// The CPU was read and shows no hypervisor flag.
		c.f.Virtualization = "none"
	default:
		c.miss("virtualization", errors.New("neither the CPU flags nor DMI could be read"))
	}
	if strings.Contains(strings.ToLower(c.f.SystemVendor), "amazon ec2") && strings.Contains(c.f.ProductName, ".") {
		c.f.InstanceType = c.f.ProductName
	} else if c.f.SystemVendor != "" {
		c.miss("instance_type", errors.New("DMI names no instance type ("+c.f.SystemVendor+" "+c.f.ProductName+")"))
	}
}

func (c *collector) dmi() {
	if c.sys == nil {
		c.miss("dmi", errNoSys)
		return
	}
	d, err := c.sys.DMIClass()
	if err != nil {
		c.miss("dmi", err)
		return
	}
	if d.SystemVendor != nil {
		c.f.SystemVendor = *d.SystemVendor
	}
	if d.ProductName != nil {
		c.f.ProductName = *d.ProductName
	}
}

// container recognises the runtimes by the marks they leave.
func (c *collector) container() string {
	if _, err := os.Stat(c.path(".dockerenv")); err == nil {
		return "docker"
	}
	if _, err := os.Stat(c.path("run", ".containerenv")); err == nil {
		return "podman"
	}
	if b, err := os.ReadFile(c.path("proc", "1", "environ")); err == nil {
		for kv := range strings.SplitSeq(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, "container="); ok && v != "" {
				return v
			}
		}
	}
	if b, err := os.ReadFile(c.path("proc", "1", "cgroup")); err == nil {
		s := string(b)
		for _, k := range []struct{ match, name string }{
			{"kubepods", "kubernetes"}, {"docker", "docker"}, {"libpod", "podman"}, {"lxc", "lxc"},
		} {
			if strings.Contains(s, k.match) {
				return k.name
			}
		}
	}
	return ""
}
