"""rping between two emulated hosts: the server on A, the client on B."""
import os


def test_rping_a_to_b(fabric):
	server = fabric.run("A", "rping", "-s", "-a", "192.0.2.65", "-C", "3")
	fabric.wait_listening()
	client = fabric.run("B", "rping", "-c", "-a", "192.0.2.65", "-C", "3", "-v")
	out, _ = client.communicate(timeout=120)
	assert client.returncode == 0, out
	# -v prints each ping's payload: three of them, the first starting at offset 0
	pings = [l for l in out.splitlines() if l.startswith("ping data: rdma-ping-")]
	assert len(pings) == 3, out
	assert pings[0].startswith("ping data: rdma-ping-0: ABCDEFGHIJKL"), out
	server_out, _ = server.communicate(timeout=120)
	assert server.returncode == 0, server_out
	# the wire between A and B carried the connection: the capture holds its frames
	assert os.path.getsize(fabric.pcap_prefix + "-eth.pcap") > 24
