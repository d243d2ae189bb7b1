// mori/cco/cco_scale_out.hpp for emud: MORI's scale-out (GDA, RDMA) device
// API is not emulated, so a source that includes it stops here with one
// clear error instead of failing on its first undeclared name. emud
// emulates the intra-node paths: mori/cco/cco.hpp's ccoSdma and LSA calls.
#pragma once
#error "mori/cco/cco_scale_out.hpp: MORI's scale-out (ccoGda over RDMA NICs) is not emulated by emud; its intra-node ccoSdma and LSA paths are (mori/cco/cco.hpp)"
// A missing header is fatal to GCC and Clang: compilation stops after the
// message above rather than going on to a cascade of undeclared names.
#include "emud/not-emulated"
