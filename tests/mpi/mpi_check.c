/* An MPI job that checks every byte it moves: point-to-point at every power
 * of two from 1 B to 16 MiB and odd sizes around them (both directions, one
 * side receiving with MPI_ANY_SOURCE), windows of MPI_Isend/MPI_Irecv in
 * flight at once, a strided datatype, and the collectives allreduce,
 * alltoall and bcast. Run under mpirun with any BTL; prints one line and
 * exits 0 when every byte arrived right, else names the first wrong byte
 * and aborts the job.
 *
 * Usage: mpi_check [--max-size BYTES] [--rounds N] [--seconds S] [--until FILE]
 *   N: repeat everything N times; S: keep repeating for at least S seconds
 *   (rank 0's clock; for tests that inject faults while the job runs);
 *   FILE: keep repeating until FILE exists (rank 0 looks after each round:
 *   a test ends the job once it saw what it waits for, however slow). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nprocs;

static unsigned char pattern(size_t i, size_t size, int seed) {
    return (unsigned char) ((i * 131u + size * 7u + (unsigned) seed * 29u + (i >> 12)) & 0xffu);
}

static void fill(unsigned char *buf, size_t size, int seed) {
    for (size_t i = 0; i < size; ++i) {
        buf[i] = pattern(i, size, seed);
    }
}

static void check(const unsigned char *buf, size_t size, int seed, const char *what) {
    for (size_t i = 0; i < size; ++i) {
        if (buf[i] != pattern(i, size, seed)) {
            fprintf(stderr, "mpi_check: rank %d: %s of %zu bytes: byte %zu is 0x%02x, expected 0x%02x\n", rank, what,
                    size, i, buf[i], pattern(i, size, seed));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
}

static void *xmalloc(size_t size) {
    void *p = malloc(size ? size : 1);
    if (!p) {
        fprintf(stderr, "mpi_check: out of memory (%zu bytes)\n", size);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

/* Rank 0 and every other rank in turn: there and back, checked on arrival. */
static void ping_pong(size_t size, int seed) {
    unsigned char *buf = xmalloc(size);
    for (int peer = 1; peer < nprocs; ++peer) {
        if (rank == 0) {
            fill(buf, size, seed);
            MPI_Send(buf, (int) size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            memset(buf, 0, size);
            MPI_Recv(buf, (int) size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(buf, size, seed + 1, "reply");
        } else if (rank == peer) {
            MPI_Status st;
            int count = -1;
            memset(buf, 0, size);
            MPI_Recv(buf, (int) size, MPI_BYTE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (st.MPI_SOURCE != 0 || count != (int) size) {
                fprintf(stderr, "mpi_check: rank %d: message from %d of %d bytes, expected 0 and %zu\n", rank,
                        st.MPI_SOURCE, count, size);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            check(buf, size, seed, "message");
            fill(buf, size, seed + 1);
            MPI_Send(buf, (int) size, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
    free(buf);
}

/* Every pair exchanges a window of messages at once, both directions. */
static void windows(size_t size, int depth, int seed) {
    unsigned char **out = xmalloc(sizeof(void *) * (size_t) depth * (size_t) nprocs);
    unsigned char **in = xmalloc(sizeof(void *) * (size_t) depth * (size_t) nprocs);
    MPI_Request *reqs = xmalloc(sizeof(MPI_Request) * 2u * (size_t) depth * (size_t) nprocs);
    int n = 0;
    for (int peer = 0; peer < nprocs; ++peer) {
        if (peer == rank) {
            continue;
        }
        for (int d = 0; d < depth; ++d) {
            size_t k = (size_t) peer * (size_t) depth + (size_t) d;
            in[k] = xmalloc(size);
            out[k] = xmalloc(size);
            memset(in[k], 0, size);
            fill(out[k], size, seed + d + 100 * rank);
            MPI_Irecv(in[k], (int) size, MPI_BYTE, peer, 10 + d, MPI_COMM_WORLD, &reqs[n++]);
            MPI_Isend(out[k], (int) size, MPI_BYTE, peer, 10 + d, MPI_COMM_WORLD, &reqs[n++]);
        }
    }
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    for (int peer = 0; peer < nprocs; ++peer) {
        if (peer == rank) {
            continue;
        }
        for (int d = 0; d < depth; ++d) {
            size_t k = (size_t) peer * (size_t) depth + (size_t) d;
            check(in[k], size, seed + d + 100 * peer, "window message");
            free(in[k]);
            free(out[k]);
        }
    }
    free(out);
    free(in);
    free(reqs);
}

/* A strided datatype: the BTL packs it through Open MPI's convertor. */
static void strided(int count, int seed) {
    MPI_Datatype vec;
    MPI_Type_vector(count, 3, 5, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    size_t span = (size_t) count * 5;
    unsigned char *buf = xmalloc(span);
    if (rank == 0) {
        fill(buf, span, seed);
        for (int peer = 1; peer < nprocs; ++peer) {
            MPI_Send(buf, 1, vec, peer, 3, MPI_COMM_WORLD);
        }
    } else {
        unsigned char *packed = xmalloc((size_t) count * 3);
        MPI_Recv(packed, count * 3, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < count; ++i) {
            for (int j = 0; j < 3; ++j) {
                size_t at = (size_t) i * 5 + (size_t) j;
                if (packed[i * 3 + j] != pattern(at, span, seed)) {
                    fprintf(stderr, "mpi_check: rank %d: strided element %d byte %d wrong\n", rank, i, j);
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
            }
        }
        free(packed);
    }
    free(buf);
    MPI_Type_free(&vec);
}

static void collectives(size_t count, int seed) {
    /* allreduce: every rank contributes (i + rank); the sum is known. */
    int64_t *a = xmalloc(count * sizeof(int64_t));
    int64_t *sum = xmalloc(count * sizeof(int64_t));
    for (size_t i = 0; i < count; ++i) {
        a[i] = (int64_t) i * seed + rank;
    }
    MPI_Allreduce(a, sum, (int) count, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < count; ++i) {
        int64_t want = (int64_t) nprocs * ((int64_t) i * seed) + (int64_t) nprocs * (nprocs - 1) / 2;
        if (sum[i] != want) {
            fprintf(stderr, "mpi_check: rank %d: allreduce element %zu is %lld, expected %lld\n", rank, i,
                    (long long) sum[i], (long long) want);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    free(a);
    free(sum);

    /* alltoall: block j of rank r's send buffer goes to rank j. */
    size_t block = count;
    unsigned char *out = xmalloc(block * (size_t) nprocs);
    unsigned char *in = xmalloc(block * (size_t) nprocs);
    for (int j = 0; j < nprocs; ++j) {
        fill(out + (size_t) j * block, block, seed + rank * 16 + j);
    }
    MPI_Alltoall(out, (int) block, MPI_BYTE, in, (int) block, MPI_BYTE, MPI_COMM_WORLD);
    for (int j = 0; j < nprocs; ++j) {
        check(in + (size_t) j * block, block, seed + j * 16 + rank, "alltoall block");
    }
    free(out);
    free(in);

    /* bcast from every root in turn. */
    unsigned char *b = xmalloc(count * 8);
    for (int root = 0; root < nprocs; ++root) {
        if (rank == root) {
            fill(b, count * 8, seed + root);
        } else {
            memset(b, 0, count * 8);
        }
        MPI_Bcast(b, (int) (count * 8), MPI_BYTE, root, MPI_COMM_WORLD);
        check(b, count * 8, seed + root, "bcast");
    }
    free(b);
}

int main(int argc, char **argv) {
    size_t max_size = 16u << 20;
    int rounds = 1;
    double seconds = 0;
    const char *until = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--max-size") && i + 1 < argc) {
            max_size = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
            seconds = atof(argv[++i]);
            rounds = 1000000;
        } else if (!strcmp(argv[i], "--until") && i + 1 < argc) {
            until = argv[++i];
            rounds = 1000000;
        } else {
            if (rank == 0) {
                fprintf(stderr, "usage: mpi_check [--max-size BYTES] [--rounds N] [--seconds S] [--until FILE]\n");
            }
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (nprocs < 2) {
        if (rank == 0) {
            fprintf(stderr, "mpi_check: needs at least 2 processes\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t checked = 0;
    double start = MPI_Wtime();
    int r;
    for (r = 0; r < rounds; ++r) {
        for (size_t s = 1; s <= max_size; s *= 2) {
            ping_pong(s, r);
            checked++;
            if (s >= 4) {
                ping_pong(s - 1, r);
                ping_pong(s + 3, r);
                checked += 2;
            }
        }
        size_t wsizes[] = {1, 4000, 65536 + 17, 1u << 20};
        for (size_t w = 0; w < sizeof wsizes / sizeof *wsizes; ++w) {
            if (wsizes[w] <= max_size) {
                windows(wsizes[w], 8, (int) w + r);
            }
        }
        strided(100000, r);
        collectives(1000, 3 + r);
        collectives(100000, 5 + r);
        if (rank == 0 && rounds > 1) {
            printf("mpi_check: round %d of %d ok\n", r + 1, seconds > 0 || until ? 0 : rounds);
            fflush(stdout);
        }
        if (seconds > 0 || until) {
            int more = rank == 0 ? (seconds <= 0 || MPI_Wtime() - start < seconds) && (!until || access(until, F_OK) != 0)
                                 : 0;
            MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (!more) {
                r++;
                break;
            }
        }
    }
    rounds = r;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mpi_check: ok: %d processes, %zu sizes from 1 B to %zu B, windows, strided, collectives, %d "
               "round(s)\n",
               nprocs, checked, max_size, rounds);
    }
    MPI_Finalize();
    return 0;
}
