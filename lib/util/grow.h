/*
 * The one growable array: an array of n elements with room for cap, grown
 * by doubling when an element is added to a full one. Every count is
 * checked against the size of the address space before it is multiplied,
 * so that a huge count is -ENOMEM, never a short buffer.
 *
 *     if (hru_grow(&v->item, &v->cap, v->n + 1, sizeof *v->item, 16) != 0)
 *         return -ENOMEM;
 *     v->item[v->n++] = x;
 */
#ifndef HOSTRANGE_UTIL_GROW_H
#define HOSTRANGE_UTIL_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Makes room for at least need elements of size bytes in the array whose
 * address is at *arr (a pointer to the array's pointer) and whose room is
 * *cap: doubling, from first when the array is empty. Returns 0 (also
 * when there was room already), or -ENOMEM with *arr and *cap as they
 * were. */
int hru_grow(void *arr, size_t *cap, size_t need, size_t size, size_t first);

/* hru_grow for an array whose room is counted in 32 bits: -ENOMEM where
 * need is beyond UINT32_MAX. */
int hru_grow32(void *arr, uint32_t *cap, size_t need, size_t size,
               uint32_t first);

/* The room hru_grow would give an array of room cap that must hold need:
 * cap itself when it is enough, else doubled from first (or from cap) up
 * to need. 0 when that room's bytes would not fit in a size_t. For arrays
 * that grow side by side, each then resized with hru_resize. */
size_t hru_grow_room(size_t cap, size_t need, size_t size, size_t first);

/* Resizes the array at *arr to n elements of size bytes. Returns 0, or
 * -ENOMEM (n * size beyond a size_t, or no memory) with *arr as it was. */
int hru_resize(void *arr, size_t n, size_t size);

#endif
