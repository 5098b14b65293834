/*
 * metricwriter: each card's metric file in the new format (AiuM, layout
 * 1.0.0.1), written from the same card model as the CSV rows.
 *
 * The file is a shared memory map of its final size, as a runtime that
 * writes in place would keep it.  An update follows the layout's protocol:
 * the first byte becomes '!', the sections (sequence number + 1, last
 * update = the realtime clock in ms, interval in ms) and the header's last
 * update are written, and the magic is put back last.  A torn update
 * (--tear-every) comes after the writer stalled for TEAR_HOLD, leaves the
 * magic alone and writes each section's data one 64-bit word at a time,
 * TEAR_PAUSE apart, and its header (sequence number and time) after its
 * data, so a reader sees new words under the old sequence number while it
 * lasts.  (A reader that did not see the previous update cannot tell those
 * words from its own: nothing in the layout can.  The stall lets a reader
 * faster than TEAR_HOLD hold the previous update, as a reader faster than
 * the writer always does.)  The old format is this layout with the
 * first four bytes zero, which is all a reader needs to recognize it.
 *
 * What the model gives, in the file's units (SPYRE.md):
 *   host_metrics  hostcpu, hostmem: whole percent (int, one word each)
 *   runtime       avgmem = actmem, peakmem: MiB
 *   perf_counter  pwr: tenths of W; tempr = gtemp: tenths of C;
 *                 rdmem, wrmem, rxpci, txpci, rdrdma, wrrdma: KiB moved
 *                 during the update interval (GiB/s x interval), rdmem
 *                 in two words that sum to it; cards without RDMA have no
 *                 rdrdma and wrrdma
 * So the CSV's pwr and the file's pwr of one update are the same number.
 */
#include "sim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "metricfile.h"
#include "timeparse.h"

#define TEAR_PAUSE_NS	(1 * NSEC_PER_MSEC)
#define TEAR_HOLD_NS	(30 * NSEC_PER_MSEC)
#define WBUF_MAX	1024

/* Round a model value to a raw word; NaN or negative gives 0. */
static uint64_t
word(double v, double scale)
{
	if (!(v > 0))
		return 0;
	return (uint64_t)(v * scale + 0.5);
}

/* Lay out the file of card for the model's last step in buf. */
static size_t
layout(struct sim_mfile *f, const struct sim_model *m, int card,
    double dt, uint64_t ms, uint8_t *buf, size_t len)
{
	static const enum sim_metric bytes_metrics[] = { SM_WRMEM, SM_RXPCI,
	    SM_TXPCI, SM_RDRDMA, SM_WRRDMA };
	static const uint32_t bytes_ids[] = { 0x13, 0x14, 0x15, 0x16, 0x17 };
	const double kib = dt * 1024.0 * 1024.0;	/* GiB/s -> KiB */
	uint64_t host[2], run[2], perf[2], rd[2], bw[5], rdtotal;
	struct mf_wmetric hm[2], rm[2], pm[8];
	struct mf_wsection s[3];
	size_t np = 0;

	host[0] = word(sim_model_value(m, card, SM_HOSTCPU), 1);
	host[1] = word(sim_model_value(m, card, SM_HOSTMEM), 1);
	hm[0] = (struct mf_wmetric){ 0x01, 1, &host[0] };
	hm[1] = (struct mf_wmetric){ 0x02, 1, &host[1] };
	run[0] = word(sim_model_value(m, card, SM_ACTMEM), 1);
	run[1] = word(sim_model_value(m, card, SM_PEAKMEM), 1);
	rm[0] = (struct mf_wmetric){ 0x81, 1, &run[0] };
	rm[1] = (struct mf_wmetric){ 0x82, 1, &run[1] };
	perf[0] = word(sim_model_value(m, card, SM_PWR), 10);
	perf[1] = word(sim_model_value(m, card, SM_GTEMP), 10);
	pm[np++] = (struct mf_wmetric){ 0x10, 1, &perf[0] };
	pm[np++] = (struct mf_wmetric){ 0x11, 1, &perf[1] };
	rdtotal = word(sim_model_value(m, card, SM_RDMEM), kib);
	rd[0] = rdtotal - rdtotal / 3;
	rd[1] = rdtotal / 3;
	pm[np++] = (struct mf_wmetric){ 0x12, 2, rd };
	for (size_t i = 0; i < 5; i++) {
		if (bytes_metrics[i] >= SM_RDRDMA && sim_card_lacks_rdma(card))
			continue;
		bw[i] = word(sim_model_value(m, card, bytes_metrics[i]), kib);
		pm[np++] = (struct mf_wmetric){ bytes_ids[i], 1, &bw[i] };
	}
	f->seq++;
	s[0] = (struct mf_wsection){ 0x01, f->seq, ms, f->interval_ms, 2, hm };
	s[1] = (struct mf_wsection){ 0x10, f->seq, ms, f->interval_ms, 2, rm };
	s[2] = (struct mf_wsection){ 0x20, f->seq, ms, f->interval_ms, np, pm };
	return mf_write(buf, len, f->order, ms, s, 3, f->offsets);
}

static void
unmap(struct sim_mfile *f)
{
	if (f->map != NULL)
		munmap(f->map, f->size);
	f->map = NULL;
	f->size = 0;
	if (f->fd != -1)
		close(f->fd);
	f->fd = -1;
}

int
sim_mfile_create(struct sim_mfile *f, const char *path)
{
	struct stat st;

	unmap(f);
	unlink(path);	/* a new inode, as a restarted workload makes */
	f->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (f->fd == -1 || fstat(f->fd, &st) == -1) {
		log_warn("%s", path);
		unmap(f);
		return -1;
	}
	f->ino = st.st_ino;
	f->dev = st.st_dev;
	f->seq = 0;
	return 0;
}

/* Size the file and map it, the first time its layout is known. */
static int
map_file(struct sim_mfile *f, size_t size)
{
	if (ftruncate(f->fd, (off_t)size) == -1)
		return -1;
	f->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		return -1;
	}
	f->size = size;
	return 0;
}

static void
pause_ns(uint64_t ns)
{
	struct timespec ts = { 0, (long)ns };

	nanosleep(&ts, NULL);
}

/* A torn update: data word by word, then each section's header. */
static void
write_torn(struct sim_mfile *f, const uint8_t *img, uint32_t nsec)
{
	for (uint32_t i = 0; i < nsec; i++) {
		uint32_t off = f->offsets[i];
		uint32_t size = mf_get_u32(img + MF_HEADER_SIZE + 8 * i + 4,
		    f->order);

		for (uint32_t w = MF_SECTION_HEADER_SIZE; w < size; w += 8) {
			memcpy(f->map + off + w, img + off + w, 8);
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			pause_ns(TEAR_PAUSE_NS);
		}
		memcpy(f->map + off, img + off, MF_SECTION_HEADER_SIZE);
	}
	memcpy(f->map + 4, img + 4, MF_HEADER_SIZE - 4 + 8 * nsec);
}

int
sim_mfile_update(struct sim_mfile *f, const struct sim_model *m, int card,
    double dt, bool torn, int64_t *stamp_ns, uint32_t *pwr_tenths)
{
	uint8_t img[WBUF_MAX];
	int64_t now = now_realtime_ns();
	uint64_t ms = (uint64_t)now / NSEC_PER_MSEC;
	size_t size;

	if (f->fd == -1)
		return -1;
	size = layout(f, m, card, dt, ms, img, sizeof(img));
	if (size == 0)
		return -1;
	if (f->map == NULL && map_file(f, size) == -1) {
		log_warn("metric file of card %d", card);
		return -1;
	}
	if (size != f->size)
		return -1;	/* the layout of a card never changes */
	if (f->old_format)
		memset(img, 0, 4);
	*stamp_ns = (int64_t)(ms * NSEC_PER_MSEC);
	*pwr_tenths = (uint32_t)word(sim_model_value(m, card, SM_PWR), 10);
	if (torn && !f->old_format) {
		pause_ns(TEAR_HOLD_NS);
		write_torn(f, img, 3);
		return 0;
	}
	f->map[0] = '!';
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(f->map + 4, img + 4, size - 4);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(f->map + 1, img + 1, 3);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	f->map[0] = img[0];
	return 0;
}

void
sim_mfile_close(struct sim_mfile *f)
{
	unmap(f);
}
