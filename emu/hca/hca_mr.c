/* PDs and MRs of the HCA model: what ib_uverbs + rxe do for alloc_pd, reg_mr and their
 * teardown, and the key/access check the data path runs for every SGE and RDMA request.
 *
 * Keys follow rxe_mr_init() (Linux 6.1): lkey = pool index << 8 | an 8-bit key drawn at random
 * (rxe_get_next_key), rkey = lkey when the MR allows any remote access, else 0. The draw comes
 * from a PRNG stream of the fabric seed, so that keys are the same run after run. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "emu/hca/hca_priv.h"

void hca_keys_init(struct emu_hca *hca)
{
	const struct emu_device *dev = hca->dev;
	const struct emu_host *h = dev->host;
	struct emu_prng root, host_domain;
	uint64_t hi = 0, di = (uint64_t)(dev - h->devices);

	if (h->fabric)
		hi = (uint64_t)(h - h->fabric->hosts);
	emu_prng_seed(&root, h->fabric ? h->fabric->seed : 0);
	emu_prng_fork(&root, EMU_PRNG_DOMAIN_HOST, &host_domain);
	/* one stream per (host, device); the top byte keeps it apart from other host streams */
	emu_prng_fork(&host_domain, 0x6b00000000000000ull | hi << 16 | di, &hca->keys);
}

static void pd_unref_locked(struct emu_pd *pd)
{
	if (pd->obj.usecnt)
		pd->obj.usecnt--;
}

int emu_hca_pd_alloc(struct emu_hca_ctx *ctx, struct emu_pd *pd)
{
	int err;

	pd->obj.type = EMU_OBJ_PD;
	pthread_mutex_lock(&ctx->hca->lock);
	err = emu_hca_obj_add_locked(ctx, &pd->obj);
	pthread_mutex_unlock(&ctx->hca->lock);
	return err;
}

int emu_hca_pd_dealloc(struct emu_pd *pd)
{
	struct emu_hca *hca = pd->obj.hca;
	int err;

	pthread_mutex_lock(&hca->lock);
	err = emu_hca_obj_remove_locked(&pd->obj);
	pthread_mutex_unlock(&hca->lock);
	return err;
}

/* ib_check_mr_access() of Linux 6.1 for a device without ODP. ON_DEMAND on rxe gives EINVAL,
 * measured in scripts/rxe-vm (not the EOPNOTSUPP a reading of the check suggests). */
static int check_access(unsigned access)
{
	const unsigned supported = ((EMU_ACCESS_HUGETLB << 1) - 1) | EMU_ACCESS_OPTIONAL_RANGE;

	if (access & (EMU_ACCESS_REMOTE_ATOMIC | EMU_ACCESS_REMOTE_WRITE) &&
	    !(access & EMU_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if (access & ~supported)
		return EINVAL;
	if (access & EMU_ACCESS_ON_DEMAND)
		return EINVAL;
	return 0;
}

/* ib_access_writable(): the pages are pinned for writing. */
static bool access_writable(unsigned access)
{
	return access & (EMU_ACCESS_LOCAL_WRITE | EMU_ACCESS_REMOTE_WRITE |
			 EMU_ACCESS_REMOTE_ATOMIC | EMU_ACCESS_MW_BIND);
}

/* ib_umem_get(): the page range behind [addr, addr + length), pinned. */
static int umem_get(uintptr_t addr, uint64_t length, unsigned access, uint64_t *npages)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), start, end;
	int err;

	if (addr + length < addr || ((addr + length + page - 1) & ~(page - 1)) < addr + length)
		return EINVAL;
	err = emu_mem_can_lock();
	if (err)
		return err;
	start = addr & ~(page - 1);
	end = (addr + length + page - 1) & ~(page - 1);
	/* length 0 covers a page unless addr is page-aligned (ib_umem_num_pages) */
	*npages = (end - start) / page;
	if (*npages == 0)
		return EINVAL;
	err = emu_mem_pin(*npages);
	if (err)
		return err;
	err = emu_mem_check_mapped(start, end, access_writable(access));
	if (err)
		emu_mem_unpin(*npages);
	return err;
}

int emu_hca_mr_reg(struct emu_pd *pd, void *addr, uint64_t length, uint64_t iova,
		   unsigned access, struct emu_mr *mr)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	struct emu_hca *hca = pd->obj.hca;
	struct hca_pool *pool = &hca->pools[EMU_OBJ_MR];
	uint64_t npages = 0;
	uint8_t key;
	int err;

	/* ib_uverbs_reg_mr(): the HCA address keeps the page offset of the user address */
	if (((uintptr_t)addr & (page - 1)) != (iova & (page - 1)))
		return EINVAL;
	err = check_access(access);
	if (err)
		return err;

	pthread_mutex_lock(&hca->lock);
	/* rxe_alloc() comes before the pages are pinned */
	if (pool->count >= pool->max_elem) {
		err = pool->full_errno;
		goto out;
	}
	err = umem_get((uintptr_t)addr, length, access, &npages);
	if (err)
		goto out;
	mr->obj.type = EMU_OBJ_MR;
	err = emu_hca_obj_add_locked(pd->obj.ctx, &mr->obj);
	if (err) {
		emu_mem_unpin(npages);
		goto out;
	}
	pd->obj.usecnt++;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->iova = iova;
	mr->access = access;
	mr->npages = npages;
	key = emu_hca_key_next_locked(hca);
	mr->lkey = mr->obj.index << 8 | key;
	mr->rkey = access & EMU_ACCESS_REMOTE ? mr->lkey : 0;
out:
	pthread_mutex_unlock(&hca->lock);
	return err;
}

int emu_hca_mr_dereg(struct emu_mr *mr)
{
	struct emu_hca *hca = mr->obj.hca;
	int err;

	pthread_mutex_lock(&hca->lock);
	err = emu_hca_obj_remove_locked(&mr->obj); /* EBUSY while MWs are bound to it */
	if (!err) {
		pd_unref_locked(mr->pd);
		emu_mem_unpin(mr->npages);
	}
	pthread_mutex_unlock(&hca->lock);
	return err;
}

uint8_t emu_hca_key_next_locked(struct emu_hca *hca)
{
	return (uint8_t)emu_prng_u64(&hca->keys);
}

enum emu_mr_status emu_hca_mr_check(struct emu_hca *hca, const struct emu_pd *pd, uint32_t key,
				    bool is_rkey, uint64_t iova, uint64_t len, unsigned needed,
				    void **host)
{
	enum emu_mr_status st = EMU_MR_OK;
	struct emu_mr *mr;

	pthread_mutex_lock(&hca->lock);
	mr = (struct emu_mr *)emu_hca_obj_find_locked(hca, EMU_OBJ_MR, key >> 8);
	/* rxe lookup_mr(): the whole key must match, then the PD, then the access */
	if (!mr || (is_rkey ? mr->rkey : mr->lkey) != key)
		st = EMU_MR_BAD_KEY;
	else if (mr->pd != pd)
		st = EMU_MR_BAD_PD;
	else if ((needed & mr->access) != needed)
		st = EMU_MR_BAD_ACCESS;
	/* mr_check_range() */
	else if (iova < mr->iova || len > mr->length || iova > mr->iova + mr->length - len)
		st = EMU_MR_BAD_RANGE;
	else if (host)
		*host = mr->addr + (iova - mr->iova);
	pthread_mutex_unlock(&hca->lock);
	return st;
}

int emu_mr_status_wc(enum emu_mr_status st, bool is_rkey)
{
	if (st == EMU_MR_OK)
		return 0;
	return is_rkey ? 10 /* IBV_WC_REM_ACCESS_ERR */ : 4 /* IBV_WC_LOC_PROT_ERR */;
}

const char *emu_mr_status_str(enum emu_mr_status st)
{
	switch (st) {
	case EMU_MR_OK: return "ok";
	case EMU_MR_BAD_KEY: return "bad key";
	case EMU_MR_BAD_PD: return "PD mismatch";
	case EMU_MR_BAD_ACCESS: return "access not granted";
	case EMU_MR_BAD_RANGE: return "out of range";
	}
	return "?";
}
