// The state stream's sending side: the XPUB's subscriptions tracked topic by topic, and
// publishing under sock.mu. Below the I/O duty (srv.c) and dispatch, which both ask it.
#include <string.h>

#include <zmq.h>

#include "srv_clock.h"
#include "srv_stream.h"

uint64_t srv_stream_published(srv *s) {
  return atomic_load(&s->stream.published);
}

int srv_stream_watched(srv *s, const char *id) {
  if (!s->sock.pub) {
    return 0;
  }
  pthread_mutex_lock(&s->stream.mu);
  int hit = s->stream.subs_more > 0;
  for (int i = 0; i < s->stream.nsubs && !hit; i++) {
    hit = memcmp(s->stream.subs[i].p, id, s->stream.subs[i].len) == 0;
  }
  pthread_mutex_unlock(&s->stream.mu);
  return hit;
}

// under sock.mu: take the XPUB's (un)subscriptions until none is left (which also re-arms
// pub_fd). A topic longer than an id matches no session and is not kept.
void srv_stream_drain_locked(srv *s) {
  unsigned char m[2 + SRV_ID_LEN];
  int n;
  while ((n = zmq_recv(s->sock.pub, m, sizeof m, ZMQ_DONTWAIT)) >= 0) {
    int len = n - 1;
    if (n < 1 || m[0] > 1 || len > SRV_ID_LEN) {
      continue;  // not a subscription, or a topic no id has
    }
    pthread_mutex_lock(&s->stream.mu);
    if (m[0] == 1 && s->stream.nsubs < SRV_SUBS_MAX) {
      s->stream.subs[s->stream.nsubs].len = (unsigned char)len;
      memcpy(s->stream.subs[s->stream.nsubs].p, m + 1, (size_t)len);
      s->stream.nsubs++;
    } else if (m[0] == 1) {
      s->stream.subs_more++;
    } else {
      int i = 0;
      while (i < s->stream.nsubs &&
             !(s->stream.subs[i].len == len && !memcmp(s->stream.subs[i].p, m + 1, len))) {
        i++;
      }
      if (i < s->stream.nsubs) {
        s->stream.subs[i] = s->stream.subs[--s->stream.nsubs];
      } else if (s->stream.subs_more > 0) {
        s->stream.subs_more--;  // one that did not fit in the table
      }
    }
    pthread_mutex_unlock(&s->stream.mu);
  }
}

// under sock.mu
void srv_stream_publish_locked(srv *s, const char *topic, const uint8_t *msg, size_t len) {
  if (!s->sock.pub) {
    return;
  }
  if (zmq_send(s->sock.pub, topic, strlen(topic), ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0 &&
      zmq_send(s->sock.pub, msg, len, ZMQ_DONTWAIT) >= 0) {
    atomic_fetch_add(&s->stream.published, 1);
  }
  // a send may take the XPUB's commands (ZeroMQ looks about once a millisecond), and with
  // them the signal on pub_fd the leader waits for: take what came in as often. Draining
  // after every send would cost two system calls a step; the housekeeping drains too, for
  // a signal taken by the last send before publishing stopped
  double now = srv_now();
  if (now >= s->sock.subs_drain_at) {
    s->sock.subs_drain_at = now + 1e-3;
    srv_stream_drain_locked(s);
  }
}
