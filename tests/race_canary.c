/* SPDX-License-Identifier: MIT */
/*
 * A deliberately broken publication: the payload is written with a plain store
 * and the flag with a relaxed store, so the reader's plain load of the payload
 * races with the writer.  ThreadSanitizer must report it (the race suite marks
 * this test should_fail); if it ever passes, the sanitizer is not working.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static int payload;
static atomic_int flag;

static void *writer(void *arg)
{
	(void)arg;
	payload = 42;
	atomic_store_explicit(&flag, 1, memory_order_relaxed); /* BUG on purpose: should be release */
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, writer, NULL);
	while (!atomic_load_explicit(&flag, memory_order_relaxed)) /* BUG on purpose: should be acquire */
		;
	int v = payload;
	pthread_join(t, NULL);
	printf("read %d\n", v);
	return 0;
}
