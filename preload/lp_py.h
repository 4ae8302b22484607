/* SPDX-License-Identifier: MIT */
/*
 * Python frames at a recorded wait (lp_py.c): the waiting thread's CPython
 * frame chain, read from the interpreter's own structures without the GIL
 * and without running Python; for a GIL wait, the thread that held the GIL
 * and the Python function it ran. docs/python.md says how and what it
 * costs.
 */
#ifndef LP_PY_H
#define LP_PY_H

#include <stdint.h>

/* What one wait carries: STRING ids (0 none), the GIL holder's tid. */
struct lp_py_wait {
	uint32_t frames;
	uint32_t holder_tid;
	uint32_t holder_frame;
	uintptr_t h_code; /* the holder's code object and code unit, until written */
	int64_t h_idx;
};

/* Looks for a CPython in this process (the constructor, once). */
void lp_py_probe(void);
/* Before a condition wait blocks (its mutex held): zeros w, then, when
 * cond is the GIL's condition of the calling Python thread, the thread
 * that holds the GIL and where it is. Keeps errno. */
void lp_py_holder(struct lp_py_wait *w, const void *cond);
/* The calling thread's Python frames into w (nothing when it runs no
 * Python), and the GIL holder's function found by lp_py_holder. Only for
 * a wait that is recorded. w starts zeroed or from lp_py_holder. Keeps
 * errno. */
void lp_py_frames(struct lp_py_wait *w);
/* Writes w for the wait of this thread that started at start (its own
 * record follows or precedes it): nothing when w is all zeros. */
void lp_py_write(const struct lp_py_wait *w, uint64_t start);

#endif
