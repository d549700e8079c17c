/* SPDX-License-Identifier: MIT */
/*
 * stub/ngx_config.h - the few nginx types ngx_event_timer.c uses, declared
 * here (no nginx code) so that `make test` compiles and runs it without an
 * nginx source tree (tests/test_nginx_timer.c).  Names and meanings as
 * nginx's headers give them; only what the timer module touches.
 */
#ifndef NGX_STUB_CONFIG_H
#define NGX_STUB_CONFIG_H

#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/types.h>
#include <unistd.h>

#define NGX_HAVE_EPOLL  1

typedef intptr_t   ngx_int_t;
typedef uintptr_t  ngx_uint_t;
typedef ngx_uint_t ngx_msec_t;
typedef ngx_int_t  ngx_msec_int_t;
typedef int        ngx_err_t;

#define NGX_OK      0
#define NGX_ERROR  -1
#define NGX_AGAIN  -2

#endif
