#!/bin/sh
# Dumps the RDMA core's sysfs classes and /dev/infiniband: one record per entry.
# "<type> <mode> <path>" then, for a symlink "-> target", for a readable file its content
# lines prefixed with "|", "\ no newline at end" when the last byte is not a newline, and
# "! <error>" when the read fails.
dump_entry() {
	p=$1
	if [ -L "$p" ]; then
		echo "L $(stat -c %a "$p") $p"
		echo "-> $(readlink "$p")"
	elif [ -d "$p" ]; then
		echo "D $(stat -c %a "$p") $p"
	elif [ -c "$p" ]; then
		echo "C $(stat -c '%a %t:%T' "$p") $p"
	else
		echo "F $(stat -c %a "$p") $p"
		if cat "$p" >/tmp/c 2>/tmp/e; then
			sed 's/^/|/' /tmp/c
			if [ -s /tmp/c ] && [ "$(tail -c1 /tmp/c | od -An -c | tr -d ' ')" != '\n' ]; then
				echo '\ no newline at end'
			fi
		else
			echo "! $(sed 's/^cat: //' /tmp/e)"
		fi
	fi
}
walk() {
	find "$1" | sort | while read -r p; do dump_entry "$p"; done
}
for cls in infiniband infiniband_verbs infiniband_mad; do
	walk /sys/class/$cls
	for l in /sys/class/$cls/*; do
		[ -L "$l" ] || continue
		walk "$(cd "$l" && pwd -P)"
	done
done
# The device directories the class links resolve to may be shared (uverbs0 lives under rxe0);
# the class-level walk above already covers them. /dev:
walk /dev/infiniband
