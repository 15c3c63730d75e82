# Sourced by .ci/run: the SSH backend's tests start their own sshd (Debian's openssh-server, in the
# foreground on a loopback port with a temporary host key and authorized_keys), so CI only has to
# install it; PADDOCK_TEST_REQUIRE_SSHD=true makes those tests fail, rather than skip, without it.
ssh_missing=()
[ -x /usr/sbin/sshd ] || ssh_missing+=(openssh-server)
command -v ssh >/dev/null 2>&1 || ssh_missing+=(openssh-client)
if [ ${#ssh_missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${ssh_missing[@]}" >/dev/null
fi
export PADDOCK_TEST_REQUIRE_SSHD=true
