#!/usr/bin/env bash
# The orchestrators' command-line tools the deploy/ recipes are tested with
# (cmd/dbmark's TestKubernetesRecipe and TestAnsibleRecipe), from Debian's
# packages:
#
#   scripts/deploy-tools.sh install   install what is missing (as root)
#   scripts/deploy-tools.sh env       print `export` lines; use: eval "$(scripts/deploy-tools.sh env)"
#
# ansible-core is installed as usual. kubectl is Debian's kubernetes-client
# unpacked into $DBMARK_TOOLS_DIR (default /tmp/dbmark-tools), not
# installed: a machine may have another package's /usr/bin/kubectl (the
# Google Cloud SDK's), which dpkg would refuse to overwrite, and the tests
# want one known client. Neither needs a cluster or a network beyond the
# package archive: the Kubernetes test is a client-side dry run.
set -euo pipefail

TOOLS=$(realpath -m "${DBMARK_TOOLS_DIR:-/tmp/dbmark-tools}")
KUBECTL=$TOOLS/kubernetes-client/usr/bin/kubectl

log() { echo "deploy-tools: $*" >&2; }
die() { echo "deploy-tools: ERROR: $*" >&2; exit 1; }

apt_ready() {
	# An archive list older than a day may name versions the mirror no longer has.
	if [[ -z $(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages' -mmin -1440 2>/dev/null | head -n 1) ]]; then
		apt-get update -q >&2
	fi
}

install_ansible() {
	command -v ansible-playbook >/dev/null && return 0
	[[ $(id -u) == 0 ]] || die "ansible-playbook is missing; run as root to install ansible-core"
	log "installing ansible-core"
	export DEBIAN_FRONTEND=noninteractive
	apt_ready
	apt-get install -y -q --no-install-recommends ansible-core >&2
}

install_kubectl() {
	[[ -x $KUBECTL ]] && return 0
	log "unpacking Debian's kubernetes-client into $TOOLS"
	install -d -m 0755 "$TOOLS"
	local tmp
	tmp=$(mktemp -d "$TOOLS/.unpack.XXXXXX")
	chmod 0755 "$tmp" # apt-get download fetches as the user _apt
	# shellcheck disable=SC2064 # $tmp is fixed here
	trap "rm -rf '$tmp'" RETURN
	apt_ready
	(cd "$tmp" && apt-get download -q kubernetes-client >&2) || die "apt-get download kubernetes-client failed"
	dpkg-deb -x "$tmp"/kubernetes-client_*.deb "$tmp/root"
	[[ -x $tmp/root/usr/bin/kubectl ]] || die "the kubernetes-client package holds no usr/bin/kubectl"
	# Whole or not at all: a second caller at once finds it complete or absent.
	rm -rf "$TOOLS/kubernetes-client.old"
	[[ -e $TOOLS/kubernetes-client ]] && mv "$TOOLS/kubernetes-client" "$TOOLS/kubernetes-client.old"
	mv "$tmp/root" "$TOOLS/kubernetes-client"
	rm -rf "$TOOLS/kubernetes-client.old"
}

cmd_env() {
	local kv
	for kv in "DBMARK_TEST_KUBECTL=$([[ -x $KUBECTL ]] && echo "$KUBECTL")" \
		"DBMARK_TEST_ANSIBLE_PLAYBOOK=$(command -v ansible-playbook || true)"; do
		printf "export %s='%s'\n" "${kv%%=*}" "${kv#*=}"
	done
}

case "${1:-}" in
install)
	install_ansible
	install_kubectl
	;;
env) cmd_env ;;
*)
	echo "usage: $0 install|env" >&2
	exit 2
	;;
esac
