#!/bin/sh
# /www/cgi-bin/virtiofs in the testguest: a KubeVirt filesystem (virtiofs) as the guest sees it.
# `curl http://GUEST/cgi-bin/virtiofs?TAG` mounts the virtiofs tag TAG at /mnt/TAG (once) and
# prints `ls -la` of it; `?TAG/FILE` prints /mnt/TAG/FILE; `?TAG/FILE=VALUE` first writes
# VALUE and a newline to it. TAG, FILE and VALUE are [A-Za-z0-9._-] only, not "." and
# without ".." (no path leaves /mnt/TAG) or a leading "-" (busybox mount would take TAG for
# an option). Anything else, or a failed mount, read or write, prints "ERROR: " and why.
echo "Content-Type: text/plain"
echo
exec 3>&1 # the page: a command's errors are captured, its output goes here

fail() {
	echo "ERROR: $*"
	exit 0
}
check() {
	case $2 in
	'' | . | *..* | -* | *[!A-Za-z0-9._-]*) fail "bad $1 '$2': [A-Za-z0-9._-], not '.', no '..' or leading '-'" ;;
	esac
}

query=$QUERY_STRING file='' value=''
case $query in *=*)
	value=${query#*=} query=${query%%=*}
	check VALUE "$value"
	;;
esac
tag=${query%%/*}
check TAG "$tag"
case $query in */*)
	file=${query#*/}
	check FILE "$file"
	;;
esac
[ -n "$file" ] || [ -z "$value" ] || fail "VALUE without FILE: ?TAG/FILE=VALUE"

dir=/mnt/$tag
if ! grep -qF " $dir virtiofs " /proc/mounts; then
	mkdir -p "$dir" || fail "mkdir $dir"
	# A request racing this one may have mounted it meanwhile.
	err=$(mount -t virtiofs "$tag" "$dir" 2>&1) || grep -qF " $dir virtiofs " /proc/mounts ||
		fail "mount -t virtiofs $tag $dir: $err"
fi
if [ -z "$file" ]; then
	err=$(ls -la "$dir" 2>&1 >&3) || fail "$err"
	exit 0
fi
if [ -n "$value" ]; then
	err=$({ printf '%s\n' "$value" >"$dir/$file"; } 2>&1) || fail "write $dir/$file: $err"
fi
err=$(cat "$dir/$file" 2>&1 >&3) || fail "$err"
