"""A pytest fixture that gives each test an emulated two-host RDMA fabric.

`fabric` starts rdmaemud on two-hosts.fabric (or $RDMAEMU_EXAMPLE_FABRIC) with a runtime
directory of the test's own, captures every frame into the test's directory (fabric.pcap_prefix
+ "-eth.pcap"), and stops the daemon afterwards. fabric.run(node, *cmd) starts a program as
that host (`rdmaemu run --node NODE -- CMD`, in the host's own network namespace where the
machine permits one); fabric.wait_listening() returns once some rdma_cm id of the fabric
listens, so a client never races its server.
rdmaemu comes from PATH, else from the bindir its pkg-config file names."""
import os
import re
import shutil
import subprocess
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def rdmaemu_path():
	found = shutil.which("rdmaemu")
	if found:
		return found
	try:
		bindir = subprocess.run(["pkg-config", "--variable=bindir", "rdmaemu"],
					capture_output=True, text=True, check=True).stdout.strip()
	except (OSError, subprocess.CalledProcessError):
		bindir = ""
	path = os.path.join(bindir, "rdmaemu")
	if bindir and os.access(path, os.X_OK):
		return path
	pytest.skip("rdmaemu is not installed")


class Fabric:
	def __init__(self, rdmaemu, path, workdir):
		self.rdmaemu = rdmaemu
		self.path = path
		self.pcap_prefix = os.path.join(workdir, "capture")
		self.env = dict(os.environ, RDMAEMU_RUNTIME_DIR=os.path.join(workdir, "run"))
		for var in ("RDMAEMU_FABRIC", "RDMAEMU_NODE", "RDMAEMU_PCAP"):
			self.env.pop(var, None)
		os.makedirs(self.env["RDMAEMU_RUNTIME_DIR"], mode=0o700)
		self.procs = []

	def ctl(self, *args):
		return subprocess.run([self.rdmaemu, "daemon", *args], env=self.env, capture_output=True,
				      text=True, timeout=60)

	def start(self):
		r = self.ctl("start", "--fabric", self.path, "--pcap", self.pcap_prefix)
		assert r.returncode == 0, r.stderr

	def run(self, node, *cmd):
		p = subprocess.Popen([self.rdmaemu, "run", "--fabric", self.path, "--node", node, "--",
				      *cmd], env=self.env, stdout=subprocess.PIPE,
				     stderr=subprocess.STDOUT, text=True)
		self.procs.append(p)
		return p

	def wait_listening(self, timeout=60):
		end = time.monotonic() + timeout
		while time.monotonic() < end:
			status = self.ctl("status").stdout
			if re.search(r"^rdma_cm file .* listen [1-9]", status, re.M):
				return
			time.sleep(0.1)
		raise TimeoutError("no rdma_cm id listens on the fabric")

	def stop(self):
		for p in self.procs:
			if p.poll() is None:
				p.kill()
				p.wait()
		self.ctl("stop")


@pytest.fixture
def fabric(tmp_path):
	path = os.environ.get("RDMAEMU_EXAMPLE_FABRIC", os.path.join(HERE, "two-hosts.fabric"))
	f = Fabric(rdmaemu_path(), path, str(tmp_path))
	f.start()
	yield f
	f.stop()
