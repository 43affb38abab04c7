/* Verbs misuse probe (devices, queries, PD, MR): prints "call -> result errno" lines. Run on kernel
 * rxe in the reference VM its output is fixtures/golden/rxe/verbs-probe-device.out; make check
 * runs it on the emulator and compares (probes/probe-diff.sh). See probes/VM-CHECKS.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
static struct ibv_pd *pd;
static void reg(const char *what, void *a, size_t l, uint64_t iova, unsigned acc)
{
	errno = 0;
	struct ibv_mr *mr = ibv_reg_mr_iova2(pd, a, l, iova, acc);
	printf("reg %-28s -> %s errno=%d", what, mr ? "OK" : "NULL", mr ? 0 : errno);
	if (mr) {
		printf(" lkey=0x%x rkey=0x%x handle=%u", mr->lkey, mr->rkey, mr->handle);
		ibv_dereg_mr(mr);
	}
	printf("\n");
}
int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = ibv_open_device(l[0]);
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	union ibv_gid g;
	struct ibv_gid_entry e[8];
	struct ibv_port_attr pa;
	int rc, t;
	__be16 pk;
	char buf[64];
	printf("dev_path=%s ibdev_path=%s num_comp_vectors=%d\n", l[0]->dev_path, l[0]->ibdev_path,
	       ctx->num_comp_vectors);
	pd = ibv_alloc_pd(ctx);
	printf("pd handle=%u\n", pd->handle);
	struct ibv_mr *a = ibv_reg_mr(pd, m, 64, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *b = ibv_reg_mr(pd, m, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	printf("mr1 lkey=0x%x rkey=0x%x h=%u; mr2 lkey=0x%x rkey=0x%x h=%u\n", a->lkey, a->rkey,
	       a->handle, b->lkey, b->rkey, b->handle);
	ibv_dereg_mr(b);
	b = ibv_reg_mr(pd, m, 64, IBV_ACCESS_REMOTE_READ);
	printf("mr3 after dereg lkey=0x%x rkey=0x%x\n", b->lkey, b->rkey);
	ibv_dereg_mr(b);
	errno = 0;
	rc = ibv_dealloc_pd(pd);
	printf("dealloc_pd with MR -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_rereg_mr(a, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	printf("rereg_mr change access -> %d errno=%d\n", rc, errno);
	ibv_dereg_mr(a);
	errno = 0;
	rc = ibv_fork_init();
	printf("fork_init after MRs -> %d errno=%d; is_fork_initialized=%d\n", rc, errno,
	       ibv_is_fork_initialized());
	reg("REMOTE_WRITE only", m, 64, (uintptr_t)m, IBV_ACCESS_REMOTE_WRITE);
	reg("REMOTE_ATOMIC only", m, 64, (uintptr_t)m, IBV_ACCESS_REMOTE_ATOMIC);
	reg("REMOTE_READ only", m, 64, (uintptr_t)m, IBV_ACCESS_REMOTE_READ);
	reg("bit 8", m, 64, (uintptr_t)m, 1 << 8);
	reg("bit 19", m, 64, (uintptr_t)m, 1 << 19);
	reg("bit 20 (relaxed)", m, 64, (uintptr_t)m, 1 << 20);
	reg("bit 30", m, 64, (uintptr_t)m, 1 << 30);
	reg("ON_DEMAND", m, 64, (uintptr_t)m, IBV_ACCESS_ON_DEMAND);
	reg("MW_BIND|ZERO_BASED|HUGETLB|LW", m, 64, (uintptr_t)m, 0x10 | 0x20 | 0x80 | 1);
	reg("len 0 aligned", m, 0, (uintptr_t)m, 1);
	reg("len 0 unaligned", m + 8, 0, (uintptr_t)m + 8, 1);
	reg("NULL 4096 acc0", NULL, 4096, 0, 0);
	reg("NULL 4096 LW", NULL, 4096, 0, 1);
	reg("overflow len", m, (size_t)-16, (uintptr_t)m, 1);
	reg("iova offset mismatch", m + 100, 64, 0x10000000, 1);
	reg("iova same offset", m + 100, 64, 0x10000064, 1);
	mprotect(m, pg, PROT_READ);
	reg("PROT_READ LW", m, 64, (uintptr_t)m, 1);
	reg("PROT_READ acc0", m, 64, (uintptr_t)m, 0);
	reg("PROT_READ REMOTE_READ", m, 64, (uintptr_t)m, 4);
	mprotect(m, pg, PROT_NONE);
	reg("PROT_NONE acc0", m, 64, (uintptr_t)m, 0);
	reg("PROT_NONE LW", m, 64, (uintptr_t)m, 1);
	munmap(m + 2 * pg, pg);
	mprotect(m, pg, PROT_READ | PROT_WRITE);
	reg("range over hole acc0", m, 4 * pg, (uintptr_t)m, 0);
	errno = 0;
	rc = ibv_query_gid(ctx, 1, 2, &g);
	printf("query_gid idx2 -> %d errno=%d raw0=%02x\n", rc, errno, g.raw[0]);
	errno = 0;
	rc = ibv_query_gid(ctx, 1, 1023, &g);
	printf("query_gid idx1023 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_query_gid(ctx, 1, 1024, &g);
	printf("query_gid idx1024 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_query_gid(ctx, 1, -1, &g);
	printf("query_gid idx-1 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_query_gid(ctx, 2, 0, &g);
	printf("query_gid port2 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_query_gid(ctx, 0, 0, &g);
	printf("query_gid port0 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_query_gid_ex(ctx, 1, 1, e, 0);
	printf("gid_ex idx1 -> %d type=%u ifindex=%u port=%u idx=%u\n", rc, e[0].gid_type,
	       e[0].ndev_ifindex, e[0].port_num, e[0].gid_index);
	errno = 0;
	rc = ibv_query_gid_ex(ctx, 1, 2, e, 0);
	printf("gid_ex idx2 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_query_gid_ex(ctx, 1, 1024, e, 0);
	printf("gid_ex idx1024 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_query_gid_ex(ctx, 2, 0, e, 0);
	printf("gid_ex port2 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_query_gid_ex(ctx, 1, 0, e, 1);
	printf("gid_ex flags1 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = _ibv_query_gid_ex(ctx, 1, 0, e, 0, 16);
	printf("gid_ex size16 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = _ibv_query_gid_ex(ctx, 1, 0, e, 0, 40);
	printf("gid_ex size40 -> %d errno=%d\n", rc, errno);
	errno = 0;
	printf("gid_table max8 -> %zd\n", ibv_query_gid_table(ctx, e, 8, 0));
	errno = 0;
	printf("gid_table max1 -> %zd errno=%d\n", ibv_query_gid_table(ctx, e, 1, 0), errno);
	errno = 0;
	printf("gid_table max0 -> %zd errno=%d\n", ibv_query_gid_table(ctx, e, 0, 0), errno);
	errno = 0;
	printf("gid_table flags1 -> %zd errno=%d\n", ibv_query_gid_table(ctx, e, 8, 1), errno);
	errno = 0;
	printf("gid_table 4096 -> %zd errno=%d\n",
	       _ibv_query_gid_table(ctx, e, 4096, 0, sizeof(e[0])), errno);
	errno = 0;
	printf("gid_table esize16 -> %zd errno=%d\n", _ibv_query_gid_table(ctx, e, 8, 0, 16),
	       errno);
	errno = 0;
	rc = ibv_query_pkey(ctx, 1, 0, &pk);
	printf("pkey idx0 -> %d 0x%04x\n", rc, be16toh(pk));
	errno = 0;
	rc = ibv_query_pkey(ctx, 1, 1, &pk);
	printf("pkey idx1 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_query_pkey(ctx, 2, 0, &pk);
	printf("pkey port2 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_get_pkey_index(ctx, 1, htobe16(0x8001));
	printf("get_pkey_index 0x8001 -> %d errno=%d\n", rc, errno);
	errno = 0;
	t = -1;
	rc = ibv_query_gid_type(ctx, 1, 0, &t);
	printf("gid_type idx0 -> %d type=%d\n", rc, t);
	errno = 0;
	t = -1;
	rc = ibv_query_gid_type(ctx, 1, 2, &t);
	printf("gid_type idx2 -> %d errno=%d type=%d\n", rc, errno, t);
	errno = 0;
	t = -1;
	rc = ibv_query_gid_type(ctx, 1, 1024, &t);
	printf("gid_type idx1024 -> %d errno=%d type=%d\n", rc, errno, t);
	errno = 0;
	t = -1;
	rc = ibv_query_gid_type(ctx, 2, 0, &t);
	printf("gid_type port2 -> %d errno=%d type=%d\n", rc, errno, t);
	errno = 0;
	rc = ibv_query_port(ctx, 0, &pa);
	printf("query_port 0 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_query_port(ctx, 2, &pa);
	printf("query_port 2 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_read_sysfs_file(l[0]->ibdev_path, "fw_ver", buf, sizeof(buf));
	printf("sysfs fw_ver -> %d '%s'\n", rc, rc >= 0 ? buf : "");
	errno = 0;
	rc = ibv_read_sysfs_file(l[0]->ibdev_path, "ports/1/gid_attrs/types/2", buf, sizeof(buf));
	printf("sysfs types/2 -> %d errno=%d\n", rc, errno);
	errno = 0;
	rc = ibv_read_sysfs_file(l[0]->ibdev_path, "ports/1/gid_attrs/ndevs/0", buf, sizeof(buf));
	printf("sysfs ndevs/0 -> %d '%s'\n", rc, rc >= 0 ? buf : "");
	errno = 0;
	rc = ibv_read_sysfs_file(l[0]->ibdev_path, "ports/1/cap_mask", buf, sizeof(buf));
	printf("sysfs cap_mask -> %d '%s'\n", rc, rc >= 0 ? buf : "");
	errno = 0;
	rc = ibv_read_sysfs_file(l[0]->ibdev_path, "ports/1/lid", buf, sizeof(buf));
	printf("sysfs lid -> %d '%s'\n", rc, rc >= 0 ? buf : "");
	struct ibv_cq_init_attr_ex ca = {.cqe = 1};
	errno = 0;
	struct ibv_pd *p2 = ibv_alloc_pd(ctx);
	printf("pd2 handle=%u\n", p2->handle);
	(void)ca;
	printf("close -> %d\n", ibv_close_device(ctx));
	ibv_free_device_list(l);
	return 0;
}
