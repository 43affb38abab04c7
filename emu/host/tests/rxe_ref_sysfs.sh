# Sourced by the RDMA netlink tests: rxe_ref_sysfs DIR fills DIR as /sys/class is on the
# single reference VM (scripts/rxe-vm run: rxe0 on d0, rxe1 on s0; fixtures/rxe-ref.fabric),
# with the files of kernel rxe the emulated host's netlink reads and the values they held
# there (docs/reference/rdma-netlink.md).
rxe_ref_sysfs() {
	for i in 0 1; do
		d=$1/infiniband/rxe$i
		p=$d/ports/1
		mkdir -p "$p/hw_counters" || return 1
		if [ $i = 0 ]; then echo d0; else echo s0; fi >"$d/parent"
		echo "0000:00ff:fe00:010$((i + 1))" >"$d/node_guid"
		cp "$d/node_guid" "$d/sys_image_guid"
		echo "1: CA" >"$d/node_type"
		echo "" >"$d/fw_ver"
		echo rxe >"$d/node_desc"
		echo "4: ACTIVE" >"$p/state"
		echo "5: LinkUp" >"$p/phys_state"
		echo Ethernet >"$p/link_layer"
		echo 0x0 >"$p/lid"
		echo 0x0 >"$p/sm_lid"
		echo 0 >"$p/lid_mask_count"
		echo 0 >"$p/sm_sl"
		echo 0x00010000 >"$p/cap_mask"
		for c in rdma_recvs out_of_seq_request retry_exceeded_err completer_retry_err \
			rcvd_seq_err retry_rnr_exceeded_err send_rnr_err duplicate_request send_err \
			rcvd_pkts link_downed sent_pkts rcvd_rnr_err ack_deferred rdma_sends; do
			echo 0 >"$p/hw_counters/$c"
		done
		echo 12 >"$p/hw_counters/lifespan"
	done
	echo "2.5 Gb/sec (1X SDR)" >"$1/infiniband/rxe0/ports/1/rate"
	echo "10 Gb/sec (1X FDR10)" >"$1/infiniband/rxe1/ports/1/rate"
	mkdir -p "$1/net/lo" "$1/net/d0" "$1/net/s0" || return 1
	echo 1 >"$1/net/lo/ifindex"
	echo 2 >"$1/net/d0/ifindex"
	echo 3 >"$1/net/s0/ifindex"
}
