/*
 * Run a TorchScript model on raw video frames through the libavfilter API
 *
 * This file is part of FFmpeg.
 *
 * FFmpeg is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License as published by the Free Software Foundation; either
 * version 2.1 of the License, or (at your option) any later version.
 *
 * FFmpeg is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
 * Lesser General Public License for more details.
 *
 * You should have received a copy of the GNU Lesser General Public
 * License along with FFmpeg; if not, write to the Free Software
 * Foundation, Inc., 51 Franklin Street, Fifth Floor, Boston, MA 02110-1301 USA
 */

/**
 * @file libavfilter API example: dnn_processing with the LibTorch backend
 * @example dnn_torch_graph.c
 *
 * Builds the graph buffer -> dnn_processing -> buffersink by hand, sets the
 * filter's options and the torch backend's own options (a child object of
 * the filter) through the AVOptions API, pushes raw rgb24 frames read from
 * files and writes the frames that come out to one raw rgb24 file.
 *
 * Each input file holds frames of one size; the sizes may differ.  When the
 * size changes, the graph is drained (the source is closed, so frames still
 * in flight in an async backend come out), freed, and built again for the
 * new size: that is what any graph needs, as most filters fix their sizes
 * when the graph is configured.  With -k the graph is kept and frames of the
 * new size are pushed into it: the buffer source lets them through with a
 * warning, but dnn_processing's output link keeps its first size, so the
 * torch backend refuses the model's output of another size with an error.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/frame.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>

#define MAX_OPTIONS 16

typedef struct Graph {
    AVFilterGraph   *graph;
    AVFilterContext *src;
    AVFilterContext *sink;
    int width, height;
} Graph;

typedef struct Settings {
    const char *model;
    const char *options[MAX_OPTIONS];   ///< NAME=VALUE strings
    int nb_options;
    int keep_graph;
} Settings;

typedef struct Output {
    FILE *file;
    int nb_frames;
    int width, height;                  ///< size of the last frame written
} Output;

static void report(const char *what, int err)
{
    fprintf(stderr, "%s failed: %s (%d)\n", what, av_err2str(err), err);
}

/**
 * Set an option of the filter, of its private context or of the DNN
 * backend's option object: AV_OPT_SEARCH_CHILDREN walks all of them.
 */
static int set_option(AVFilterContext *filter, const char *name,
                      const char *value)
{
    int ret;

    if (!av_opt_find(filter, name, NULL, 0, AV_OPT_SEARCH_CHILDREN)) {
        fprintf(stderr, "%s has no option '%s'\n", filter->filter->name, name);
        report("av_opt_find", AVERROR_OPTION_NOT_FOUND);
        return AVERROR_OPTION_NOT_FOUND;
    }
    ret = av_opt_set(filter, name, value, AV_OPT_SEARCH_CHILDREN);
    if (ret < 0) {
        fprintf(stderr, "cannot set %s=%s\n", name, value);
        report("av_opt_set", ret);
    }
    return ret;
}

static int set_options(AVFilterContext *dnn, const Settings *s)
{
    int ret;

    if ((ret = set_option(dnn, "dnn_backend", "torch")) < 0 ||
        (ret = set_option(dnn, "model", s->model)) < 0)
        return ret;
    for (int i = 0; i < s->nb_options; i++) {
        char name[64];
        const char *eq = strchr(s->options[i], '=');

        if (!eq || eq - s->options[i] >= sizeof(name)) {
            fprintf(stderr, "option '%s' is not NAME=VALUE\n", s->options[i]);
            return AVERROR(EINVAL);
        }
        memcpy(name, s->options[i], eq - s->options[i]);
        name[eq - s->options[i]] = 0;
        if ((ret = set_option(dnn, name, eq + 1)) < 0)
            return ret;
    }
    return 0;
}

/* Allocate dnn_processing, set its options, then initialize: init loads the model. */
static int dnn_create(Graph *g, const Settings *s, AVFilterContext **dnn)
{
    int ret;

    *dnn = avfilter_graph_alloc_filter(g->graph, avfilter_get_by_name("dnn_processing"),
                                       "dnn");
    if (!*dnn) {
        fprintf(stderr, "this build has no dnn_processing filter\n");
        return AVERROR_FILTER_NOT_FOUND;
    }
    if ((ret = set_options(*dnn, s)) < 0)
        return ret;
    ret = avfilter_init_str(*dnn, NULL);
    if (ret < 0)
        report("avfilter_init_str(dnn_processing)", ret);
    return ret;
}

static int sink_create(Graph *g)
{
    int ret;

    g->sink = avfilter_graph_alloc_filter(g->graph, avfilter_get_by_name("buffersink"),
                                          "out");
    if (!g->sink)
        return AVERROR(ENOMEM);
    ret = av_opt_set(g->sink, "pixel_formats", "rgb24", AV_OPT_SEARCH_CHILDREN);
    if (ret >= 0)
        ret = avfilter_init_str(g->sink, NULL);
    if (ret < 0)
        report("setting up the buffer sink", ret);
    return ret;
}

static int graph_init(Graph *g, const Settings *s, int width, int height)
{
    AVFilterContext *dnn;
    char args[128];
    int ret;

    g->width  = width;
    g->height = height;
    g->graph  = avfilter_graph_alloc();
    if (!g->graph)
        return AVERROR(ENOMEM);
    /* every link is rgb24: no conversion filter may sneak in */
    avfilter_graph_set_auto_convert(g->graph, AVFILTER_AUTO_CONVERT_NONE);

    snprintf(args, sizeof(args),
             "video_size=%dx%d:pix_fmt=rgb24:time_base=1/25:pixel_aspect=1/1",
             width, height);
    ret = avfilter_graph_create_filter(&g->src, avfilter_get_by_name("buffer"),
                                       "in", args, NULL, g->graph);
    if (ret < 0) {
        report("creating the buffer source", ret);
        return ret;
    }

    if ((ret = dnn_create(g, s, &dnn)) < 0 || (ret = sink_create(g)) < 0)
        return ret;
    if ((ret = avfilter_link(g->src, 0, dnn, 0)) < 0 ||
        (ret = avfilter_link(dnn, 0, g->sink, 0)) < 0) {
        report("avfilter_link", ret);
        return ret;
    }
    ret = avfilter_graph_config(g->graph, NULL);
    if (ret < 0) {
        report("avfilter_graph_config", ret);
        return ret;
    }
    fprintf(stderr, "graph configured for %dx%d, output link %dx%d\n",
            width, height, av_buffersink_get_w(g->sink),
            av_buffersink_get_h(g->sink));
    return 0;
}

static int write_frame(Output *o, AVFrame *frame)
{
    int ret = 0;

    if (frame->width != o->width || frame->height != o->height) {
        fprintf(stderr, "output frame %d: %dx%d\n", o->nb_frames,
                frame->width, frame->height);
        o->width  = frame->width;
        o->height = frame->height;
    }
    for (int y = 0; y < frame->height && !ret; y++) {
        if (fwrite(frame->data[0] + y * frame->linesize[0], 3, frame->width,
                   o->file) != frame->width)
            ret = AVERROR(errno);
    }
    av_frame_unref(frame);
    if (ret < 0) {
        report("writing the output", ret);
        return ret;
    }
    o->nb_frames++;
    return 0;
}

/** Write every frame the sink has now. */
static int pull_frames(Graph *g, AVFrame *frame, Output *o)
{
    int ret;

    while ((ret = av_buffersink_get_frame(g->sink, frame)) >= 0) {
        if ((ret = write_frame(o, frame)) < 0)
            return ret;
    }
    if (ret != AVERROR(EAGAIN) && ret != AVERROR_EOF) {
        report("av_buffersink_get_frame", ret);
        return ret;
    }
    return 0;
}

/**
 * Close the source and take every frame left: with the source closed,
 * av_buffersink_get_frame() runs the graph until it has a frame or EOF.
 */
static int graph_drain(Graph *g, AVFrame *frame, Output *o)
{
    int ret = av_buffersrc_add_frame(g->src, NULL);

    if (ret < 0) {
        report("closing the buffer source", ret);
        return ret;
    }
    while ((ret = av_buffersink_get_frame(g->sink, frame)) >= 0) {
        if ((ret = write_frame(o, frame)) < 0)
            return ret;
    }
    if (ret != AVERROR_EOF) {
        report("draining the graph", ret);
        return ret;
    }
    return 0;
}

static int read_frame(FILE *in, AVFrame *frame, int width, int height)
{
    int ret;

    frame->format = AV_PIX_FMT_RGB24;
    frame->width  = width;
    frame->height = height;
    ret = av_frame_get_buffer(frame, 0);
    if (ret < 0)
        return ret;
    for (int y = 0; y < height; y++) {
        if (fread(frame->data[0] + y * frame->linesize[0], 3, width, in) != width)
            return y || !feof(in) ? AVERROR_INVALIDDATA : AVERROR_EOF;
    }
    return 0;
}

/** Push all frames of one input file, pulling results as they come. */
static int filter_file(Graph *g, const char *name, int width, int height,
                       int64_t *pts, Output *o)
{
    AVFrame *frame = av_frame_alloc();
    FILE *in = fopen(name, "rb");
    int ret = 0;

    if (!frame || !in) {
        ret = frame ? AVERROR(errno) : AVERROR(ENOMEM);
        fprintf(stderr, "cannot open %s\n", name);
        report("fopen", ret);
        goto end;
    }
    while ((ret = read_frame(in, frame, width, height)) >= 0) {
        frame->pts = (*pts)++;
        ret = av_buffersrc_add_frame(g->src, frame);
        if (ret < 0) {
            report("av_buffersrc_add_frame", ret);
            goto end;
        }
        if ((ret = pull_frames(g, frame, o)) < 0)
            goto end;
    }
    if (ret == AVERROR_EOF) {
        ret = 0;
    } else {
        fprintf(stderr, "%s: not whole %dx%d rgb24 frames\n", name, width, height);
        report("read_frame", ret);
    }
end:
    if (in)
        fclose(in);
    av_frame_free(&frame);
    return ret;
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [-k] [-o NAME=VALUE]... MODEL OUTPUT INPUT WxH [INPUT WxH]...\n"
            "Run the TorchScript MODEL on raw rgb24 frames through "
            "buffer -> dnn_processing -> buffersink.\n"
            "Each INPUT holds frames of size WxH; OUTPUT gets all output "
            "frames, raw rgb24 (- for stdout).\n"
            "  -o NAME=VALUE  an option of dnn_processing or of its torch "
            "backend\n"
            "                 (async=0, nireq=2, device=cpu, optimize=1, ...)\n"
            "  -k             keep one graph across size changes instead of "
            "building a new one\n", prog);
}

/* Read the options and the model into s; the index of OUTPUT, or -1. */
static int parse_args(int argc, char **argv, Settings *s)
{
    int i;

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-k"))
            s->keep_graph = 1;
        else if (!strcmp(argv[i], "-o") && i + 1 < argc && s->nb_options < MAX_OPTIONS)
            s->options[s->nb_options++] = argv[++i];
        else
            return -1;
    }
    if (argc - i < 4 || (argc - i) % 2)
        return -1;
    s->model = argv[i];
    return i + 1;
}

int main(int argc, char **argv)
{
    Settings s = { 0 };
    Graph g = { 0 };
    AVFrame *frame = NULL;
    Output o = { 0 };
    int64_t pts = 0;
    int ret = 0, i = parse_args(argc, argv, &s);

    if (i < 0) {
        usage(argv[0]);
        return 1;
    }

    o.file = strcmp(argv[i], "-") ? fopen(argv[i], "wb") : stdout;
    frame  = av_frame_alloc();
    if (!o.file || !frame) {
        ret = o.file ? AVERROR(ENOMEM) : AVERROR(errno);
        fprintf(stderr, "cannot open %s\n", argv[i]);
        report("fopen", ret);
        goto end;
    }

    for (i++; i < argc; i += 2) {
        int width, height;

        if (sscanf(argv[i + 1], "%dx%d", &width, &height) != 2 ||
            width <= 0 || height <= 0) {
            fprintf(stderr, "'%s' is not a size WxH\n", argv[i + 1]);
            ret = AVERROR(EINVAL);
            goto end;
        }
        if (g.graph && !s.keep_graph &&
            (width != g.width || height != g.height)) {
            fprintf(stderr, "size change to %dx%d: building a new graph\n",
                    width, height);
            if ((ret = graph_drain(&g, frame, &o)) < 0)
                goto end;
            avfilter_graph_free(&g.graph);
        }
        if (!g.graph && (ret = graph_init(&g, &s, width, height)) < 0)
            goto end;
        ret = filter_file(&g, argv[i], width, height, &pts, &o);
        if (ret < 0)
            goto end;
    }
    ret = graph_drain(&g, frame, &o);
    if (ret >= 0)
        fprintf(stderr, "%"PRId64" frames in, %d frames out\n", pts, o.nb_frames);

end:
    avfilter_graph_free(&g.graph);
    av_frame_free(&frame);
    if (o.file && fclose(o.file) && ret >= 0) {
        ret = AVERROR(errno);
        report("closing the output", ret);
    }
    return ret < 0;
}
