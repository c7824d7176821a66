// FCL sibling of bench_geom.c: the same meshes (built by our primitives) at the same poses.
// Minimum distance: fcl::distance with nearest points on BVHModel<OBBRSS>. Proximity (every
// leaf pair closer than the standoff): a distance traversal over the same OBBRSS hierarchies
// that prunes node pairs whose OBBRSS distance is >= d_s and keeps every leaf pair below it
// (PQP triangle distance at the leaves), checked against brute force over all triangle pairs.
// Prints one line per case in the format bench_geom --fcl reads.
//
// With --ab it measures ccsim's cold queries too, in this one process: the two engines take
// turns in blocks of --block queries (default 25) at the same poses, so a change in the
// shared machine's speed falls on both alike, and it prints each case's medians and their
// ratio ccsim / FCL (and checks that both find the same number of leaf pairs at every pose).
//   bench_geom_fcl --ab [--n QUERIES] [--block B]
#include <fcl/fcl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

extern "C" {
#include "bench_geom_scene.h"
#include "geo_bvh.h"
#include "geo_mesh.h"
#include "geo_prim.h"
#include "geo_query.h"
}

using S = double;
using BV = fcl::OBBRSS<S>;
using Model = fcl::BVHModel<BV>;

static double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static std::shared_ptr<Model> make_model(const geo_mesh *m) {
  std::vector<fcl::Vector3<S>> v(m->nvert);
  std::vector<fcl::Triangle> t(m->ntri);
  for (int i = 0; i < m->nvert; i++) {
    v[i] = fcl::Vector3<S>(m->vert[3 * i], m->vert[3 * i + 1], m->vert[3 * i + 2]);
  }
  for (int i = 0; i < m->ntri; i++) {
    t[i].set(m->tri[3 * i], m->tri[3 * i + 1], m->tri[3 * i + 2]);
  }
  auto model = std::make_shared<Model>();
  model->beginModel(m->ntri, m->nvert);
  model->addSubModel(v, t);
  model->endModel();
  return model;
}

// every leaf pair (tri of A, tri of B) closer than ds; A at tfa, B at tfb. The stack is
// reserved once by the caller (no allocation per query once warmed up).
struct ProxTraversal {
  std::vector<std::pair<int, int>> stack;
  std::vector<std::pair<int, int>> pairs;

  void run(const Model &a, const fcl::Transform3<S> &tfa, const Model &b,
           const fcl::Transform3<S> &tfb, S ds) {
    pairs.clear();
    stack.clear();
    // relative transform of B in A's frame, as FCL's own mesh distance traversal uses it
    fcl::Transform3<S> tf = tfa.inverse(Eigen::Isometry) * tfb;
    const fcl::Matrix3<S> R = tf.linear();
    const fcl::Vector3<S> T = tf.translation();
    stack.emplace_back(0, 0);
    while (!stack.empty()) {
      auto [ia, ib] = stack.back();
      stack.pop_back();
      const fcl::BVNode<BV> &na = a.getBV(ia), &nb = b.getBV(ib);
      if (fcl::distance(R, T, na.bv, nb.bv) >= ds) {
        continue;
      }
      if (na.isLeaf() && nb.isLeaf()) {
        const fcl::Triangle &ta = a.tri_indices[na.primitiveId()];
        const fcl::Triangle &tb = b.tri_indices[nb.primitiveId()];
        fcl::Vector3<S> P, Q;
        S d = fcl::detail::TriangleDistance<S>::triDistance(
            a.vertices[ta[0]], a.vertices[ta[1]], a.vertices[ta[2]], b.vertices[tb[0]],
            b.vertices[tb[1]], b.vertices[tb[2]], R, T, P, Q);
        if (d < ds) {
          pairs.emplace_back(na.primitiveId(), nb.primitiveId());
        }
        continue;
      }
      // FCL's rule: descend the first unless it is a leaf or the smaller volume
      bool first = !na.isLeaf() && (nb.isLeaf() || na.bv.size() > nb.bv.size());
      if (first) {
        stack.emplace_back(na.rightChild(), ib);
        stack.emplace_back(na.leftChild(), ib);
      } else {
        stack.emplace_back(ia, nb.rightChild());
        stack.emplace_back(ia, nb.leftChild());
      }
    }
  }
};

// FCL's side of one cone: both models, their collision objects (the cone at the origin)
// and the proximity traversal with its buffers reserved (no allocation per query)
struct FclScene {
  std::shared_ptr<Model> mt, mc;
  fcl::CollisionObject<S> ot, oc;
  fcl::Transform3<S> tfc = fcl::Transform3<S>::Identity();
  ProxTraversal prox;

  FclScene(std::shared_ptr<Model> t, std::shared_ptr<Model> c) : mt(t), mc(c), ot(t), oc(c) {
    oc.setTransform(tfc);
    oc.computeAABB();
    prox.stack.reserve(4096);
    prox.pairs.reserve(1 << 16);
  }
};

// brute force: every triangle pair, world frame, PQP distance (AABB prefilter)
static std::vector<std::pair<int, int>> brute(const Model &a, const fcl::Transform3<S> &tfa,
                                              const Model &b, const fcl::Transform3<S> &tfb,
                                              S ds) {
  std::vector<std::pair<int, int>> out;
  std::vector<std::array<fcl::Vector3<S>, 3>> wa(a.num_tris), wb(b.num_tris);
  for (int i = 0; i < a.num_tris; i++) {
    for (int k = 0; k < 3; k++) wa[i][k] = tfa * a.vertices[a.tri_indices[i][k]];
  }
  for (int i = 0; i < b.num_tris; i++) {
    for (int k = 0; k < 3; k++) wb[i][k] = tfb * b.vertices[b.tri_indices[i][k]];
  }
  for (int i = 0; i < a.num_tris; i++) {
    fcl::Vector3<S> lo = wa[i][0].cwiseMin(wa[i][1]).cwiseMin(wa[i][2]).array() - ds;
    fcl::Vector3<S> hi = wa[i][0].cwiseMax(wa[i][1]).cwiseMax(wa[i][2]).array() + ds;
    for (int j = 0; j < b.num_tris; j++) {
      fcl::Vector3<S> lo2 = wb[j][0].cwiseMin(wb[j][1]).cwiseMin(wb[j][2]);
      fcl::Vector3<S> hi2 = wb[j][0].cwiseMax(wb[j][1]).cwiseMax(wb[j][2]);
      if ((lo.array() > hi2.array()).any() || (lo2.array() > hi.array()).any()) continue;
      fcl::Vector3<S> P, Q;
      S d = fcl::detail::TriangleDistance<S>::triDistance(wa[i][0], wa[i][1], wa[i][2], wb[j][0],
                                                          wb[j][1], wb[j][2], P, Q);
      if (d < ds) out.emplace_back(i, j);
    }
  }
  return out;
}

// --ab: both engines' cold minimum-distance and proximity queries in alternating blocks
static int ab_run(int npose, int block) {
  char err[256];
  int ok = 1;
  std::printf(
      "# FCL %s and ccsim in turns of %d queries, Rock-N-Stack: medians over %d poses "
      "jittered < %.2g mm\n",
      FCL_VERSION, block, npose, BG_JITTER * 1e3);
  for (int rings = 1; rings <= 16; rings += 15) {
    geo_mesh *torus, *cone;
    bg_meshes(rings, &torus, &cone, err, sizeof err);
    geo_bvh *bt = torus ? geo_bvh_new(torus, err, sizeof err) : nullptr;
    geo_bvh *bc = cone ? geo_bvh_new(cone, err, sizeof err) : nullptr;
    const int cap = 1 << 15;
    geo_query_ws *ws = bt && bc ? geo_query_ws_new(bt, bc, cap, err, sizeof err) : nullptr;
    if (!ws) {
      std::fprintf(stderr, "setup: %s\n", err);
      return 0;
    }
    std::vector<geo_pair> out(cap);
    FclScene fs(make_model(torus), make_model(cone));
    const Model &mt = *fs.mt, &mc = *fs.mc;
    fcl::CollisionObject<S> &ot = fs.ot, &oc = fs.oc;
    const fcl::Transform3<S> &tfc = fs.tfc;
    ProxTraversal &prox = fs.prox;
    fcl::DistanceRequest<S> req(true);
    geo_pose xc = geo_pose_identity();
    for (int li = 0; li < 2; li++) {
      double lift = li ? BG_LIFT : 0.0;
      double z = bg_torus_height(lift);
      // [query kind][engine]: per-query times; raw pair counts per pose for the check
      std::vector<double> t[2][2];
      std::vector<long> nf(npose), nc(npose);
      for (int q = 0; q < 2; q++) {
        for (int k0 = 0; k0 < npose; k0 += block) {
          int k1 = std::min(npose, k0 + block);
          for (int e = 0; e < 2; e++) {
            int fcl_turn = (e + k0 / block) % 2;  // who goes first alternates too
            for (int k = k0; k < k1; k++) {
              double p[3];
              bg_pose(k, z, p);
              fcl::Transform3<S> tft = fcl::Transform3<S>::Identity();
              tft.translation() = fcl::Vector3<S>(p[0], p[1], p[2]);
              geo_pose xt = {{p[0], p[1], p[2]}, {1, 0, 0, 0}};
              if (fcl_turn && q == 0) {
                // placing the object is outside the timing, as in the default run
                ot.setTransform(tft);
                ot.computeAABB();
              }
              double t0 = now_s();
              if (fcl_turn && q == 0) {
                fcl::DistanceResult<S> r;
                fcl::distance(&ot, &oc, req, r);
              } else if (fcl_turn) {
                prox.run(mt, tft, mc, tfc, BG_STANDOFF);
                nf[k] = (long)prox.pairs.size();
              } else if (q == 0) {
                geo_pair mp;
                geo_min_distance(bt, &xt, bc, &xc, ws, nullptr, &mp);
              } else {
                geo_prox_info info;
                ok &= geo_proximity(bt, &xt, bc, &xc, BG_STANDOFF, ws, nullptr, out.data(), cap,
                                    &info) == GEO_QOK;
                nc[k] = info.n_raw;
              }
              t[q][fcl_turn].push_back(now_s() - t0);
            }
          }
        }
      }
      int same = nf == nc;
      ok &= same;
      double m[2][2];
      for (int q = 0; q < 2; q++) {
        for (int e = 0; e < 2; e++) {
          m[q][e] = 1e6 * median(t[q][e]);
        }
      }
      std::printf(
          "rings=%d lift=%g  min distance: ccsim %.2f us, FCL %.2f us, ratio %.2f  "
          "proximity cold: ccsim %.2f us, FCL %.2f us, ratio %.2f  leaf pairs %s\n",
          rings, lift, m[0][0], m[0][1], m[0][0] / m[0][1], m[1][0], m[1][1], m[1][0] / m[1][1],
          same ? "same at every pose" : "DIFFERENT");
      std::fflush(stdout);
    }
    geo_query_ws_destroy(&ws);
    geo_bvh_destroy(&bt);
    geo_bvh_destroy(&bc);
    geo_mesh_destroy(&torus);
    geo_mesh_destroy(&cone);
  }
  return ok;
}

int main(int argc, char **argv) {
  int npose = BG_NPOSE, ab = 0, block = 25;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      npose = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--block") == 0 && i + 1 < argc) {
      block = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--ab") == 0) {
      ab = 1;
    } else {
      std::fprintf(stderr, "usage: %s [--ab [--block B]] [--n QUERIES]\n", argv[0]);
      return 2;
    }
  }
  if (ab) {
    return ab_run(npose, block) ? 0 : 1;
  }
  char err[256];
  int ok = 1;
  std::printf("# FCL %s, Rock-N-Stack: medians over %d poses jittered < %.2g mm\n",
              FCL_VERSION, npose, BG_JITTER * 1e3);
  for (int rings = 1; rings <= 16; rings += 15) {
    geo_mesh *torus, *cone;
    bg_meshes(rings, &torus, &cone, err, sizeof err);
    if (!torus || !cone) {
      std::fprintf(stderr, "mesh: %s\n", err);
      return 1;
    }
    std::vector<double> t;
    std::shared_ptr<Model> mt, mc;
    for (int k = 0; k < 21; k++) {
      double t0 = now_s();
      mt = make_model(torus);
      mc = make_model(cone);
      t.push_back(now_s() - t0);
    }
    double build_ms = 1e3 * median(t);
    FclScene fs(mt, mc);
    fcl::CollisionObject<S> &ot = fs.ot, &oc = fs.oc;
    const fcl::Transform3<S> &tfc = fs.tfc;
    ProxTraversal &prox = fs.prox;
    for (int li = 0; li < 2; li++) {
      double lift = li ? BG_LIFT : 0.0;
      double z = bg_torus_height(lift);
      fcl::DistanceRequest<S> req(true);
      fcl::Transform3<S> tft = fcl::Transform3<S>::Identity();
      double p[3];
      // nominal pose figures
      tft.translation() = fcl::Vector3<S>(0, 0, z);
      ot.setTransform(tft);
      ot.computeAABB();
      fcl::DistanceResult<S> res;
      fcl::distance(&ot, &oc, req, res);
      double mind = res.min_distance;
      prox.run(*mt, tft, *mc, tfc, BG_STANDOFF);
      int raw = (int)prox.pairs.size();
      // minimum distance
      t.assign(npose, 0.0);
      for (int k = 0; k < npose; k++) {
        bg_pose(k, z, p);
        tft.translation() = fcl::Vector3<S>(p[0], p[1], p[2]);
        ot.setTransform(tft);
        ot.computeAABB();
        double t0 = now_s();
        fcl::DistanceResult<S> r;
        fcl::distance(&ot, &oc, req, r);
        t[k] = now_s() - t0;
      }
      double min_us = 1e6 * median(t);
      // proximity (leaf pairs below ds), checked against brute force on the first poses
      long leafsum = 0;
      for (int k = 0; k < npose; k++) {
        bg_pose(k, z, p);
        tft.translation() = fcl::Vector3<S>(p[0], p[1], p[2]);
        double t0 = now_s();
        prox.run(*mt, tft, *mc, tfc, BG_STANDOFF);
        t[k] = now_s() - t0;
        leafsum += (long)prox.pairs.size();
        if (k < 3) {
          auto ref = brute(*mt, tft, *mc, tfc, BG_STANDOFF);
          auto got = prox.pairs;
          std::sort(ref.begin(), ref.end());
          std::sort(got.begin(), got.end());
          if (ref != got) {
            std::fprintf(stderr, "FCL proximity differs from brute force at pose %d: %zu vs %zu\n",
                         k, got.size(), ref.size());
            ok = 0;
          }
        }
      }
      double prox_us = 1e6 * median(t);
      std::printf("rings=%d lift=%g build_ms=%.3f min_us=%.2f prox_us=%.2f raw=%d mind=%.9g "
                  "leafsum=%ld\n",
                  rings, lift, build_ms, min_us, prox_us, raw, mind, leafsum);
    }
    geo_mesh_destroy(&torus);
    geo_mesh_destroy(&cone);
  }
  return ok ? 0 : 1;
}
