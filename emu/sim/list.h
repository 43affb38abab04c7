/* Intrusive doubly linked list (the kernel's list_head, reduced to what the emulator uses).
 * Nodes live inside the objects they link, so queues of packets or timers cost no allocation
 * of their own and an object can remove itself in O(1). */
#ifndef RDMAEMU_EMU_LIST_H
#define RDMAEMU_EMU_LIST_H

#include <stdbool.h>
#include <stddef.h>

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#endif

struct emu_list {
	struct emu_list *next, *prev;
};

static inline void emu_list_init(struct emu_list *head)
{
	head->next = head;
	head->prev = head;
}

static inline bool emu_list_empty(const struct emu_list *head)
{
	return head->next == head;
}

static inline void emu_list_add_tail(struct emu_list *head, struct emu_list *node)
{
	node->prev = head->prev;
	node->next = head;
	head->prev->next = node;
	head->prev = node;
}

static inline void emu_list_del(struct emu_list *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	node->next = node;
	node->prev = node;
}

#define emu_list_entry(ptr, type, member) container_of(ptr, type, member)

/* Safe against removal of the current node. */
#define emu_list_for_each_safe(pos, tmp, head) \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); (pos) = (tmp), (tmp) = (pos)->next)

#endif
