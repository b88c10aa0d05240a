#!/usr/bin/env bash
# The scenarios' busybox image from Debian's busybox-static (a static binary: the image is
# that binary and one symlink per applet).
#
# usage: build-busybox.sh IMAGE_TAG
set -euo pipefail
tag=${1:?usage: build-busybox.sh IMAGE_TAG}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
bb=/bin/busybox
dpkg -s busybox-static >/dev/null 2>&1 || die "busybox-static is not installed: apt-get install busybox-static"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/tmp" "$work/etc"
install -m 0755 "$bb" "$work/bin/busybox"
for applet in $("$bb" --list); do
  [ "$applet" = busybox ] || ln -s busybox "$work/bin/$applet"
done
echo 'root:x:0:0:root:/root:/bin/sh' > "$work/etc/passwd"
echo 'root:x:0:' > "$work/etc/group"
chmod 1777 "$work/tmp"
tar --numeric-owner -C "$work" -c . | docker import \
  --change 'ENV PATH=/bin' --change 'CMD ["sh"]' - "$tag" >/dev/null
step "busybox: $tag ($("$bb" 2>&1 | sed -n 1p | cut -d' ' -f1-2))"
