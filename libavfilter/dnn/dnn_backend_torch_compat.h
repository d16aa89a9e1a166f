/*
 * LibTorch DNN backend: the DNN interfaces it is built against
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
 * @file
 * The one place where the torch backend tells FFmpeg 9.0 from master.
 *
 * Master after the 9.0 branch (libavfilter 12.2 and later) has batch_size
 * in DnnContext, an option of every backend; FFmpeg 9.0 has none there,
 * and the torch backend declares its own (THOptions.batch_size).  The
 * option means the same on both: frames per forward, 1 to 1000, default 1.
 */

#ifndef AVFILTER_DNN_DNN_BACKEND_TORCH_COMPAT_H
#define AVFILTER_DNN_DNN_BACKEND_TORCH_COMPAT_H

#include "libavutil/macros.h"
#include "libavutil/version.h"
#include "libavfilter/version.h"

#if LIBAVFILTER_VERSION_INT >= AV_VERSION_INT(12, 2, 0)
#define TH_BATCH_SIZE(ctx) ((ctx)->batch_size)
/* DnnContext's own option, not repeated among the backend's */
#define TH_BATCH_SIZE_OPTION
#else
#define TH_BATCH_SIZE(ctx) ((ctx)->torch_option.batch_size)
#define TH_BATCH_SIZE_OPTION                                                \
    { "batch_size", "frames per forward: the N of the model's N x C x H x W input", \
      offsetof(THOptions, batch_size), AV_OPT_TYPE_INT, { .i64 = 1 }, 1, 1000, \
      AV_OPT_FLAG_FILTERING_PARAM, NULL },
#endif

#endif /* AVFILTER_DNN_DNN_BACKEND_TORCH_COMPAT_H */
