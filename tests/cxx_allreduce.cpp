// SPDX-License-Identifier: MIT
//
// tests/cxx_allreduce.cpp - a C++ program of the library's users: includes
// <topocoll.h> (every public header, in extern "C"), runs an allreduce of
// p = 4 ranks on a ring and a nonblocking exchange with requests held in a
// std::vector, and checks both.  Built against the build tree (meson) and
// against an installed copy found by pkg-config (tests/test_install.sh).
#include <topocoll.h>

#include <atomic>
#include <cstdio>
#include <vector>

namespace
{

const int P = 4;
const size_t N = 1000;

std::atomic<int> bad(0);

int rank_main(struct tc_proc *proc, void *)
{
	const int me = tc_rank(proc), p = tc_size(proc);
	std::vector<double> in(N), out(N);
	for (size_t i = 0; i < N; i++)
		in[i] = (double)(me + 1) * (double)(i + 1);
	int err = tc_allreduce(proc, in.data(), out.data(), N, TC_DOUBLE, TC_OP_SUM, NULL);
	if (err)
		return err;
	const double ranks = (double)p * (p + 1) / 2; // 1 + 2 + ... + p
	for (size_t i = 0; i < N; i++)
		if (out[i] != ranks * (double)(i + 1))
			bad++;

	// Both ring neighbours: requests are storage of the caller.
	const int right = (me + 1) % p, left = (me + p - 1) % p;
	int sent[2] = {me, me}, got[2] = {-1, -1};
	std::vector<tc_request> reqs(4);
	err = tc_isend(proc, right, &sent[0], sizeof(int), &reqs[0]);
	if (!err)
		err = tc_isend(proc, left, &sent[1], sizeof(int), &reqs[1]);
	if (!err)
		err = tc_irecv(proc, left, &got[0], sizeof(int), &reqs[2]);
	if (!err)
		err = tc_irecv(proc, right, &got[1], sizeof(int), &reqs[3]);
	if (!err)
		err = tc_waitall(proc, 4, reqs.data());
	if (!err && (got[0] != left || got[1] != right))
		bad++;
	return err;
}

} // namespace

int main()
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:4";
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	if (!err)
		err = tc_run(team, rank_main, NULL);
	if (err)
		std::fprintf(stderr, "cxx_allreduce: %s (%s)\n", tc_strerror(err), tc_error_detail());
	tc_team_destroy(team);
	if (!err && bad.load())
		std::fprintf(stderr, "cxx_allreduce: %d wrong results\n", bad.load());
	if (err || bad.load())
		return 1;
	std::printf("cxx_allreduce: p = %d allreduce of %zu doubles and a ring exchange: ok\n", P, N);
	return 0;
}
