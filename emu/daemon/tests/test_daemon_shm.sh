#!/bin/sh
# The shared-memory rings between the processes of one host (docs/daemon.md, "Shared memory"):
# bytes end to end, the same results as the daemon path, several processes of one host, and
# a process killed in the middle.
#   - shm_xfer (emu/daemon/tests/shm_xfer.c) as server and client on host rxe-ref: RDMA READ,
#     WRITE and SEND of patterned messages (64 KiB, i.e. 64 packets of MTU 1024, and 5000
#     bytes, a short last packet), every byte compared on the side that receives it; the
#     daemon must have forwarded no loopback frame (status "loopback-frames"): they all went
#     through the rings.
#   - the same with RDMAEMU_SHM=0 (the daemon path): the same output, and loopback frames
#     counted by the daemon; and with the daemon capturing (--pcap): the same output.
#   - two pairs at once on one host (four processes, QPN slots 0-3): each frame reaches the
#     process owning its DestQP.
#   - ibv_rc_pingpong -c (rdma-core's own check) with 64 KiB messages through the rings.
#   - a client killed with SIGKILL in a long run: the server's ring thread hears SHM_GONE
#     (trace "MAPPED -> FREE"), the daemon's status shows it with no peer, a new pair runs.
#   - held ACKs (emu/verbs/ack_hold.c), traced (RDMAEMU_TRACE=qp): shm_xfer pp- (ib_write_lat's
#     pattern) holds every ACK on both sides; quiet- (a server that neither posts nor polls)
#     holds every ACK and its ring thread sends them; no resend in either (a resend means an
#     ACK never sent); through the daemon (RDMAEMU_SHM=0) none is held.
# Timeouts are real-time safety nets only (generous, for a loaded machine).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
command -v ibv_rc_pingpong >/dev/null 2>&1 || { echo "ibverbs-utils not installed: skipped"; exit 77; }
xfer="$b/emu/daemon/tests/shm_xfer"
. "$s/emu/daemon/tests/daemon_test_env.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE
daemon_test_ports 23200
ref="$s/fixtures/rxe-ref.fabric"

# xfer_start TAG SIZE COUNT: a server and a client in the background (files in $t/TAG)
xfer_start() {
	rm -rf "$t/$1"; mkdir "$t/$1"
	timeout 120 "$rdmaemu" run --fabric "$ref" -- "$xfer" server "$t/$1" $2 $3 \
		>"$t/$1/srv.out" 2>&1 &
	xs=$!
	timeout 120 "$rdmaemu" run --fabric "$ref" -- "$xfer" client "$t/$1" $2 $3 \
		>"$t/$1/cli.out" 2>&1 &
	xc=$!
}
# xfer_check NAME TAG SIZE COUNT: both exited 0 with their exact line
xfer_check() {
	wait $xs; src=$?
	wait $xc; crc=$?
	if [ $src -ne 0 ] || [ $crc -ne 0 ] ||
	   [ "$(cat "$t/$2/srv.out")" != "shm_xfer server: $4 x $3 bytes: send, write match" ] ||
	   [ "$(cat "$t/$2/cli.out")" != "shm_xfer client: $4 x $3 bytes: read matches" ]; then
		echo "FAIL $1 (server exit $src, client exit $crc):"
		cat "$t/$2/srv.out" "$t/$2/cli.out"; fail=1
	else
		echo "ok $1: $(cat "$t/$2/cli.out")"
	fi
}
xfer() {
	xfer_start $2 $3 $4; xfer_check "$@"
}
loopback_frames() {
	"$rdmaemu" daemon status | sed -n 's/^loopback-frames //p'
}
# expect_loopback NAME OP VALUE: the loopback frames the daemon forwarded since the last call
lf0=0
expect_loopback() {
	lf=$(loopback_frames)
	if [ -z "$lf" ] || ! [ $((lf - lf0)) "$2" "$3" ]; then
		echo "FAIL $1: the daemon forwarded $((lf - lf0)) loopback frames, expected $2 $3"
		fail=1
	else
		echo "ok $1: the daemon forwarded $((lf - lf0)) loopback frames"
	fi
	lf0=$lf
}
# Through the rings the daemon forwards no loopback frame of shm_xfer: an attach returns only
# once every process of the host has mapped the new pair (SHM_READY), and shm_xfer's server
# lives until the client has seen its last completion, so nothing is sent to a process gone.
rings_max=0

"$rdmaemu" daemon start --fabric "$ref" || { echo "daemon start failed"; cat "$t/rdmaemud.log"; exit 1; }
xfer "rings 64 KiB" big 65536 20
xfer "rings 5000 B" odd 5000 30
expect_loopback "rings only" -le $rings_max
cp "$t/big/cli.out" "$t/big.shm"; cp "$t/big/srv.out" "$t/bigs.shm"

# One copy between the processes (emu/verbs/xfast.c), traced (RDMAEMU_TRACE=xfast, stderr
# apart). xfast MODE TAG SIZE COUNT HOW[|CHOW] SERVED CSERVED DECLINED REFUSED SERVER_ENV --
# CLIENT_ENV: exact output lines; the server's trace counts SERVED messages copied HOW ("one
# copy (mapped)": the peer's registered pages mapped, emu/verbs/xmap.c; "one copy
# (process_vm)"; "inline": the payload in the descriptor) by the server
# (the client's WRITEs and SENDs) and DECLINED descriptors, the client's CSERVED (its READs,
# done CHOW, HOW when not given: "placed by the responder", the server's copy into the
# client's mapped pages under a claim, emu/verbs/xclaim.c; else copied by the client at their
# answer; with a CHOW, CSERVED is "N+M": N so, M copied HOW by the client) and REFUSED notices
# of a pair turned back to frames. Every WRITE and
# SEND the server served is acknowledged by exactly one ACK descriptor (no ACK frame): the
# messages the ACK descriptors say they cover add up to SERVED.
xfast() {
	mode=$1 tag=$2 size=$3 n=$4 how=${5%%|*} chow=${5#*|} ws=$6 wc=$7 wd=$8 wr=$9; shift 9
	senv=
	while [ "$1" != -- ]; do senv="$senv $1"; shift; done
	shift
	rm -rf "$t/$tag"; mkdir "$t/$tag"
	env RDMAEMU_TRACE=xfast $senv timeout 120 "$rdmaemu" run --fabric "$ref" -- "$xfer" \
		${mode}server "$t/$tag" $size $n >"$t/$tag/srv.out" 2>"$t/$tag/srv.err" &
	xs=$!
	env RDMAEMU_TRACE=xfast "$@" timeout 120 "$rdmaemu" run --fabric "$ref" -- "$xfer" \
		${mode}client "$t/$tag" $size $n >"$t/$tag/cli.out" 2>"$t/$tag/cli.err"
	crc=$?
	wait $xs; src=$?
	case $mode in
	badkey-) os="shm_xfer badkey-server: $size bytes: the write matched"
		 oc="shm_xfer badkey-client: $size bytes: write ok, bad rkey: remote access error" ;;
	*) os="shm_xfer server: $n x $size bytes: send, write match"
	   oc="shm_xfer client: $n x $size bytes: read matches" ;;
	esac
	gs=$(grep -c "xfast: qp [0-9]* <- pid [0-9]*: psn .*, $how$" "$t/$tag/srv.err")
	gd=$(grep -c "xfast: qp [0-9]* <- pid [0-9]*: psn .* declined" "$t/$tag/srv.err")
	gc=$(grep -c "xfast: qp [0-9]* <- pid [0-9]*: psn .*, $chow$" "$t/$tag/cli.err")
	[ "$chow" = "$how" ] ||
		gc="$gc+$(grep -c "xfast: qp [0-9]* <- pid [0-9]*: psn .*, $how$" "$t/$tag/cli.err")"
	# the messages the ACK descriptors acknowledge (coalesced ACKs cover several)
	ga=$(sed -n 's/^.*xfast: qp [0-9]*: ACK psn 0x[0-9a-f]* as a descriptor for \([0-9]*\) messages$/\1/p' \
		"$t/$tag/srv.err" | awk '{ n += $1 } END { print n + 0 }')
	gr=$(grep -c "^rdmaemu: one-copy transfers \(to\|from\) pid [0-9]* refused (Operation not permitted): frames from now on$" "$t/$tag/cli.err")
	if [ $src -ne 0 ] || [ $crc -ne 0 ] || [ "$(cat "$t/$tag/srv.out")" != "$os" ] ||
	   [ "$(cat "$t/$tag/cli.out")" != "$oc" ] || [ "$gs" != "$ws" ] || [ "$gd" != "$wd" ] ||
	   [ "$gc" != "$wc" ] || [ "$gr" != "$wr" ] || [ "$ga" != "$ws" ]; then
		echo "FAIL one copy $tag ($how): exits $src/$crc, served $gs/$gc declined $gd refused $gr acknowledged by ACK descriptors $ga (want $ws/$wc, $wd, $wr, $ws)"
		cat "$t/$tag/srv.out" "$t/$tag/cli.out"; tail -n 5 "$t/$tag/srv.err" "$t/$tag/cli.err"
		fail=1
	else
		echo "ok one copy $tag: served $gs ($how)/$gc ($chow), declined $gd, refused $gr, acknowledged by ACK descriptors $ga: $(cat "$t/$tag/cli.out")"
	fi
}
# 20 x 64 KiB READ, WRITE, SEND: every one copied once, by the server, between the peers'
# registered pages mapped (WRITE and SEND from the client's, READ into them under a claim),
# but the first READ, copied by the client: its target starts the client's calloc()ed buffer,
# whose first page is partly outside the region (not mapped, so not the server's to write)
xfast "" xf 65536 20 "one copy (mapped)|placed by the responder" 40 19+1 0 0 --
# the same with the move asked for outright (RDMAEMU_XFAST_MAP=1)
xfast "" xf1 65536 20 "one copy (mapped)|placed by the responder" 40 19+1 0 0 RDMAEMU_XFAST_MAP=1 -- RDMAEMU_XFAST_MAP=1
# the client copies its READs at the server's answer when it does not arm claims
xfast "" xfnp 65536 20 "one copy (mapped)" 40 20 0 0 -- RDMAEMU_XFAST_PLACE=0
# 1 MiB messages, 4 of each
xfast "" xfm 1048576 4 "one copy (mapped)|placed by the responder" 8 3+1 0 0 --
# 1000-byte WRITEs and SENDs carried in their descriptors (READs as frames)
xfast "" xfinl 1000 20 inline 40 0 0 0 --
# registered pages not moved (RDMAEMU_XFAST_MAP=0): process_vm_readv
xfast "" xfpvm 65536 20 "one copy (process_vm)" 40 20 0 0 RDMAEMU_XFAST_MAP=0 -- RDMAEMU_XFAST_MAP=0
# a bad rkey: the WRITE before it one copy, the bad one declined, then the packet path's NAK
xfast badkey- xfbad 65536 1 "one copy (mapped)" 1 0 1 0 --
# turned off (RDMAEMU_XFAST=0 in the requester): frames, nothing served or declined
xfast "" xfoff 65536 20 "one copy (mapped)" 0 0 0 0 -- RDMAEMU_XFAST=0
# registered memory moved to a memfd and back (emu/verbs/xmap.c) by default (this machine
# has userfaultfd's write protection) and when asked, left alone when told; no write of
# another thread lost to a move; a child of fork() sees the memory at the fork
while IFS='|' read -r what envs want; do
	rm -rf "$t/regmap"; mkdir "$t/regmap"
	env $envs timeout 120 "$rdmaemu" run --fabric "$ref" -- "$xfer" $what "$t/regmap" \
		262144 20 >"$t/regmap/out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || [ "$(cat "$t/regmap/out")" != "shm_xfer $what: 262144 bytes$want" ]; then
		echo "FAIL $what ${envs:-(default)}: exit $rc"; cat "$t/regmap/out"; fail=1
	else
		echo "ok $what ${envs:-(default)}: $(cat "$t/regmap/out")"
	fi
done <<EOF
regmap||: moved and back, contents kept
regmap|RDMAEMU_XFAST_MAP=1|: moved and back, contents kept
regmap|RDMAEMU_XFAST_MAP=0|: not moved
regrace||, 20 registrations: moved, no write lost
regrace|RDMAEMU_XFAST_MAP=0|, 20 registrations: not moved, no write lost
regfork||, 20 forks (moved): the children saw the memory at the fork
regfork|RDMAEMU_XFAST_MAP=0|, 20 forks (not moved): the children saw the memory at the fork
EOF
# a copy refused (RDMAEMU_XFAST=eperm in the server: as a ptrace rule would, and its pages
# not moved): the first READ copied by the client, the first WRITE declined by the server, the client told once,
# everything after as frames
xfast "" xfperm 65536 20 "one copy (process_vm)" 0 1 1 1 RDMAEMU_XFAST=eperm --
# the same refused to the client: its first READ's copy fails, the READ goes again as
# packets (answered from the server's responder resources), then everything as frames
xfast "" xfcperm 65536 20 "one copy (mapped)" 0 0 0 1 -- RDMAEMU_XFAST=eperm

# four processes of one host, two pairs at once
xfer_start p1 65536 10; s1=$xs c1=$xc
xfer_start p2 4096 40
xfer_check "second pair of four processes" p2 4096 40
xs=$s1 xc=$c1; xfer_check "first pair of four processes" p1 65536 10
expect_loopback "four processes, rings only" -le $rings_max

# rdma-core's own check, 64 KiB messages
port=$((port + 1))
timeout 120 "$rdmaemu" run --fabric "$ref" -- ibv_rc_pingpong -d rxe0 -g 1 -c -s 65536 -n 50 \
	-p $port >"$t/srv.out" 2>&1 &
spid=$!
i=0
while :; do
	timeout 120 "$rdmaemu" run --fabric "$ref" -- ibv_rc_pingpong -d rxe0 -g 1 -c -s 65536 \
		-n 50 -p $port 127.0.0.1 >"$t/cli.out" 2>&1
	crc=$?
	grep -q "^Couldn't connect to 127.0.0.1:$port" "$t/cli.out" && [ $i -lt 300 ] || break
	sleep 0.1; i=$((i + 1))
done
wait $spid; src=$?
if [ $src -ne 0 ] || [ $crc -ne 0 ] || grep -q "invalid data" "$t/srv.out" "$t/cli.out" ||
   ! grep -q "^6553600 bytes in" "$t/cli.out"; then
	echo "FAIL rc_pingpong -c 64 KiB (server $src, client $crc):"; cat "$t/srv.out" "$t/cli.out"
	fail=1
else
	echo "ok rc_pingpong -c 64 KiB: $(grep bytes "$t/cli.out")"
fi

# held ACKs: MODE TAG COUNT HELD_SERVER HELD_CLIENT [env]: exact lines, the held ACKs counted
# in each side's trace, each message covered by exactly one ACK sent and one ACK sent for 16
# messages at most, no resend (the ACK timeout is 4.3 s there)
covered() {
	sed -n 's/^.*resp: held ACK psn [0-9]* sent for \([0-9]*\) messages$/\1/p' "$1" |
		awk '{ n += $1 } END { print n + 0 }'
}
acks() {
	mode=$1 tag=$2 n=$3 hs=$4 hc=$5; shift 5
	rm -rf "$t/$tag"; mkdir "$t/$tag"
	env RDMAEMU_TRACE=qp "$@" timeout 120 "$rdmaemu" run --fabric "$ref" -- "$xfer" \
		$mode-server "$t/$tag" 64 $n >"$t/$tag/srv.out" 2>"$t/$tag/srv.err" &
	xs=$!
	env RDMAEMU_TRACE=qp "$@" timeout 120 "$rdmaemu" run --fabric "$ref" -- "$xfer" \
		$mode-client "$t/$tag" 64 $n >"$t/$tag/cli.out" 2>"$t/$tag/cli.err"
	crc=$?
	wait $xs; src=$?
	case $mode in
	pp) ws="every write matched" wc="every write matched" ;;
	*) ws="the last write matched" wc="every write completed" ;;
	esac
	gs=$(grep -c "resp: ACK psn .* held" "$t/$tag/srv.err")
	gc=$(grep -c "resp: ACK psn .* held" "$t/$tag/cli.err")
	# the messages the held ACKs sent acknowledge: each held one exactly once (coalesced
	# ACKs cover several)
	ss=$(covered "$t/$tag/srv.err") sc=$(covered "$t/$tag/cli.err")
	rs=$(grep -c "go back to psn" "$t/$tag/srv.err" "$t/$tag/cli.err" | awk -F: '{ n += $2 } END { print n }')
	if [ $src -ne 0 ] || [ $crc -ne 0 ] ||
	   [ "$(cat "$t/$tag/srv.out")" != "shm_xfer $mode-server: $n x 64 bytes: $ws" ] ||
	   [ "$(cat "$t/$tag/cli.out")" != "shm_xfer $mode-client: $n x 64 bytes: $wc" ] ||
	   [ "$gs" != "$hs" ] || [ "$gc" != "$hc" ] || [ "$ss" != "$hs" ] || [ "$sc" != "$hc" ] ||
	   [ "$rs" != 0 ] ||
	   [ $(grep -c "resp: held ACK psn .* sent" "$t/$tag/srv.err") -lt $(((hs + 15) / 16)) ]; then
		echo "FAIL held ACKs $mode $*: exits $src/$crc, held $gs/$gc (want $hs/$hc), covered by those sent $ss/$sc, resends $rs"
		cat "$t/$tag/srv.out" "$t/$tag/cli.out"; fail=1
	else
		echo "ok held ACKs $mode $*: held $gs (server) / $gc (client), each covered once by the $(grep -c "resp: held ACK psn .* sent" "$t/$tag/srv.err") / $(grep -c "resp: held ACK psn .* sent" "$t/$tag/cli.err") sent, no resend"
	fi
}
# (when each held ACK leaves is timing: the latency it buys is bench/run-daemon-bench's)
acks pp pp 200 200 200
acks quiet quiet 50 50 0
# up to 8 WRITEs in flight: a held ACK may cover several, 16 at most (so at least 13 sent)
acks stream stream 200 200 0
acks pp ppd 50 0 0 RDMAEMU_SHM=0

# A ring whose reader keeps up stays in its first 128 KiB (link_shm.c's ring_room): 1,000
# inline WRITEs of 1,000 bytes, each waited for (~1 MiB of records through the client's ring),
# leave exactly 2 x (4 + 128) = 264 KiB of the two rings in each side's page tables (each
# direction's header page and first 128 KiB, populated at its first record: the requests one
# way, their ACK descriptors the other); a writer that swept on through the ring populated
# it by 1 MiB chunks (2,184 KiB).
rm -rf "$t/hot"; mkdir "$t/hot"
env SHM_XFER_RINGS=1 timeout 120 "$rdmaemu" run --fabric "$ref" -- "$xfer" quiet-server \
	"$t/hot" 1000 1000 >"$t/hot/srv.out" 2>"$t/hot/srv.err" &
xs=$!
env SHM_XFER_RINGS=1 timeout 120 "$rdmaemu" run --fabric "$ref" -- "$xfer" quiet-client \
	"$t/hot" 1000 1000 >"$t/hot/cli.out" 2>"$t/hot/cli.err"
crc=$?
wait $xs; src=$?
hs=$(sed -n 's/^shm_xfer quiet-server: rings resident \([0-9]*\) KiB$/\1/p' "$t/hot/srv.err")
hc=$(sed -n 's/^shm_xfer quiet-client: rings resident \([0-9]*\) KiB$/\1/p' "$t/hot/cli.err")
if [ $src -ne 0 ] || [ $crc -ne 0 ] || [ "$hs" != 264 ] || [ "$hc" != 264 ] ||
   [ "$(cat "$t/hot/cli.out")" != "shm_xfer quiet-client: 1000 x 1000 bytes: every write completed" ]; then
	echo "FAIL rings kept warm: exits $src/$crc, resident $hs/$hc KiB (want 264 each)"
	cat "$t/hot/srv.out" "$t/hot/cli.out"; tail -n 3 "$t/hot/srv.err" "$t/hot/cli.err"; fail=1
else
	echo "ok rings kept warm: 1 MiB through them, $hs KiB (server) / $hc KiB (client) resident"
fi

lf0=$(loopback_frames)
# the daemon path: same output, frames through the daemon (64 KiB x 20 x 3 messages: at least
# 3840 data packets)
RDMAEMU_SHM=0 xfer "daemon path 64 KiB" big 65536 20
if ! cmp -s "$t/big/cli.out" "$t/big.shm" || ! cmp -s "$t/big/srv.out" "$t/bigs.shm"; then
	echo "FAIL: the daemon path printed something else than the rings"; fail=1
fi
expect_loopback "daemon path" -ge 3840
"$rdmaemu" daemon stop >/dev/null

# the daemon capturing: loopback frames are not on the wire either way; the same output
"$rdmaemu" daemon start --fabric "$ref" --pcap "$t/cap" ||
	{ echo "daemon start --pcap failed"; exit 1; }
xfer "rings, daemon capturing" big 65536 20
if ! cmp -s "$t/big/cli.out" "$t/big.shm" || ! cmp -s "$t/big/srv.out" "$t/bigs.shm"; then
	echo "FAIL: with a capture the output differs"; fail=1
fi
lf0=0
expect_loopback "rings, daemon capturing" -le $rings_max

# a client killed in the middle of a long run
port=$((port + 1))
RDMAEMU_TRACE=shm "$rdmaemu" run --fabric "$ref" -- ibv_rc_pingpong -d rxe0 -g 1 -n 100000000 \
	-p $port >"$t/srv.out" 2>&1 &
spid=$!
lpids=$spid
i=0
while :; do
	"$rdmaemu" run --fabric "$ref" -- ibv_rc_pingpong -d rxe0 -g 1 -n 100000000 -p $port \
		127.0.0.1 >"$t/cli.out" 2>&1 &
	cpid=$!
	lpids="$spid $cpid"
	# paired (the server's trace names it) and exchanging (its output says nothing until
	# the end: give it a moment once paired)
	while kill -0 $cpid 2>/dev/null &&
	      ! grep -q "shm: peer slot [0-9]* (pid $cpid, .*FREE -> MAPPED" "$t/srv.out"; do
		sleep 0.1
	done
	kill -0 $cpid 2>/dev/null || [ $i -ge 300 ] && break
	wait $cpid; sleep 0.1; i=$((i + 1))
done
sleep 0.5
kill -KILL $cpid
wait $cpid 2>/dev/null
i=0
while ! grep -q "shm: peer slot [0-9]* (pid $cpid, .*MAPPED -> FREE" "$t/srv.out" && [ $i -lt 300 ]; do
	sleep 0.1; i=$((i + 1))
done
if ! grep -q "shm: peer slot [0-9]* (pid $cpid, .*MAPPED -> FREE" "$t/srv.out" ||
   ! "$rdmaemu" daemon status | grep -q "^process $spid .* shm-peers 0$"; then
	echo "FAIL killed client: the server did not drop its rings:"; cat "$t/srv.out"
	"$rdmaemu" daemon status; fail=1
else
	echo "ok killed client: the server dropped its rings, the daemon shows no peer"
fi
kill $spid 2>/dev/null
wait $spid 2>/dev/null
lpids=
lf0=$(loopback_frames)
xfer "a new pair after the kill" big 65536 20
expect_loopback "after the kill, rings only" -le $rings_max
exit $fail
