# The oracle of the kill-at-a-point cells (rc-kill-{client,server}-at-{connect,disconnect}),
# shared by faults/check-faults.sh (the emulator) and faults/check-faults-rxe.sh (kernel rxe),
# so that both stacks are held to the same verdict. Sourced.
#
# kill_point_verdict VICTIM POINT SRVFILE: with $other the survivor's last line and $orc its
# exit status, sets good (1 or 0); for client-disconnect, $other becomes the server's "rc:"
# line of SRVFILE.
# shellcheck shell=sh disable=SC2154,SC2034  # other, orc: the caller's; good: set for it
kill_point_verdict() {
	case $1-$2 in
	client-connect) case $other in
		"next client: server: rc: 100 messages in order, every byte checked") good=$((orc == 0)) ;;
		"server: event: RDMA_CM_EVENT_REJECTED status 28 after 0 messages"|"server: event: RDMA_CM_EVENT_REJECTED status 1 after 0 messages") good=$((orc == 4)) ;;
		*) good=0 ;; esac ;;
	server-connect) case $other in
		"client: event: RDMA_CM_EVENT_REJECTED status 28 after 0 messages") good=$((orc == 4)) ;;
		*) good=0 ;; esac ;;
	client-disconnect) good=$((orc == 0)); other=$(grep "^server: rc:" "$3") ;;
	server-disconnect) good=$((orc == 0)) ;;
	*) good=0 ;;
	esac
}
