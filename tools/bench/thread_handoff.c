/*
 * What a thread per inference costs against a hand-off to a thread that
 * stays: the way DNNAsyncExecModule (libavfilter/dnn/dnn_backend_common.c)
 * starts each inference (pthread_create, then pthread_join before the
 * next) against the torch backend's workers (a condition variable).
 *
 *   cc -O2 -pthread tools/bench/thread_handoff.c -o thread_handoff && ./thread_handoff
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
static volatile int sink;
static void *work(void *a) { sink++; return NULL; }
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int pending, done, quit;
static void *worker(void *a) {
    pthread_mutex_lock(&m);
    for (;;) {
        while (!pending && !quit) pthread_cond_wait(&c, &m);
        if (quit) break;
        pending = 0; sink++; done = 1;
        pthread_cond_broadcast(&c);
    }
    pthread_mutex_unlock(&m);
    return NULL;
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void) {
    const int n = 20000; pthread_t t; double t0;
    t0 = now();
    for (int i = 0; i < n; i++) { pthread_create(&t, NULL, work, NULL); pthread_join(t, NULL); }
    printf("create+join per inference: %.1f us\n", (now() - t0) / n * 1e6);
    pthread_create(&t, NULL, worker, NULL);
    t0 = now();
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&m); pending = 1; done = 0; pthread_cond_broadcast(&c);
        while (!done) pthread_cond_wait(&c, &m);
        pthread_mutex_unlock(&m);
    }
    printf("hand-off to a persistent worker: %.1f us\n", (now() - t0) / n * 1e6);
    pthread_mutex_lock(&m); quit = 1; pthread_cond_broadcast(&c); pthread_mutex_unlock(&m); pthread_join(t, NULL);
    return 0;
}
