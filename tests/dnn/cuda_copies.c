/*
 * CUDA_INJECTION64_PATH library that counts the memory copies a process
 * makes on the GPU, by direction, with CUPTI's activity records.  At exit it
 * writes one line per direction to $CUDA_COPIES_LOG (or stderr):
 *
 *     cuda-copies DtoH <copies> <bytes>
 *
 * The GPU suite uses it to show that NVDEC -> dnn_processing -> null moves no
 * frame data to the host (and, as a control, that hwdownload does).
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#define BUF_SIZE (1 << 20)

static const char *const kind_names[] = {
    [CUPTI_ACTIVITY_MEMCPY_KIND_HTOD] = "HtoD",
    [CUPTI_ACTIVITY_MEMCPY_KIND_DTOH] = "DtoH",
    [CUPTI_ACTIVITY_MEMCPY_KIND_HTOA] = "HtoA",
    [CUPTI_ACTIVITY_MEMCPY_KIND_ATOH] = "AtoH",
    [CUPTI_ACTIVITY_MEMCPY_KIND_DTOD] = "DtoD",
    [CUPTI_ACTIVITY_MEMCPY_KIND_HTOH] = "HtoH",
    [CUPTI_ACTIVITY_MEMCPY_KIND_PTOP] = "PtoP",
};
#define NB_KINDS (sizeof(kind_names) / sizeof(kind_names[0]))

static uint64_t copies[NB_KINDS], bytes[NB_KINDS];

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer      = aligned_alloc(8, BUF_SIZE);
    *size        = *buffer ? BUF_SIZE : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    CUpti_Activity *record = NULL;

    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)record;
            if (m->copyKind < NB_KINDS) {
                copies[m->copyKind]++;
                bytes[m->copyKind] += m->bytes;
            }
        }
    }
    free(buffer);
}

static void report(void)
{
    const char *path = getenv("CUDA_COPIES_LOG");
    FILE *f = path ? fopen(path, "w") : stderr;

    cuptiActivityFlushAll(1);
    if (!f)
        return;
    for (size_t i = 0; i < NB_KINDS; i++)
        if (kind_names[i])
            fprintf(f, "cuda-copies %s %llu %llu\n", kind_names[i],
                    (unsigned long long)copies[i], (unsigned long long)bytes[i]);
    if (f != stderr)
        fclose(f);
}

int InitializeInjection(void)
{
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS)
        return 0;
    atexit(report);
    return 1;
}
