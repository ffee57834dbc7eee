/* SPDX-License-Identifier: MIT */
/* Intrusive doubly linked lists: objects embed their links, so no list op allocates. */
#ifndef SOFTEFA_UTIL_LIST_H
#define SOFTEFA_UTIL_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_node {
	struct list_node *next, *prev;
};

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

static inline void list_init(struct list_node *head)
{
	head->next = head;
	head->prev = head;
}

static inline bool list_empty(const struct list_node *head)
{
	return head->next == head;
}

/* Is a node on some list? (A removed node links to itself.) */
static inline bool list_linked(const struct list_node *n)
{
	return n->next != n;
}

static inline void list_add_tail(struct list_node *head, struct list_node *n)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

static inline void list_del(struct list_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n;
	n->prev = n;
}

#define list_for_each_safe(head, pos, tmp)                               \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

#endif
