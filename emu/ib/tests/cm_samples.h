/* Sample CM messages shared by test_cm_mad (whose golden bytes are written out by hand from
 * the values below) and cm_gen (which writes them into a capture for cm-tshark.sh). */
#ifndef RDMAEMU_TESTS_CM_SAMPLES_H
#define RDMAEMU_TESTS_CM_SAMPLES_H

#include <stdint.h>

#include "emu/ib/cm_mad.h"

/* The samples, in capture order: REQ, MRA, REP, RTU, REJ, DREQ, DREP, SIDR_REQ, SIDR_REP. */
extern const uint16_t cm_sample_attrs[9];
/* Fills *m with the sample of attr_id (one of the above). */
void cm_sample(uint16_t attr_id, struct emu_cm_msg *m);

#endif
