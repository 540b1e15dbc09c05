// SynthRow: one generated payment before it is written, compact (40 bytes) so that a day's rows
// can be buffered and ordered cheaply. Accounts are indices into the Population; currencies are
// indices into kSynthCurrencies; amounts are in minor units of their currency (cents, or 10^-6
// for Bitcoin).
//
// Thread safety: plain value type.
#ifndef VIGIL_SYNTH_INTERNAL_SYNTH_ROW_H_
#define VIGIL_SYNTH_INTERNAL_SYNTH_ROW_H_

#include <cstdint>

#include "vigil/core/transaction.h"
#include "vigil/synth/typology.h"

namespace vigil::synth::internal {

struct SynthRow {
  int32_t minute = 0;  // minutes since GeneratorOptions::start (pattern builders: since the
                       // pattern's first payment)
  int32_t from = 0;
  int32_t to = 0;
  int64_t paid_minor = 0;
  int64_t received_minor = 0;
  uint8_t paid_ccy = 0;
  uint8_t received_ccy = 0;
  PaymentFormat format = PaymentFormat::kUnknown;
  Typology typology = Typology::kNone;
};

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_SYNTH_ROW_H_
