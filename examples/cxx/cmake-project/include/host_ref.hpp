// Reference results computed on the host: plain C++ with no HIP, so the
// Makefile builds it with the host compiler and links its object beside
// emud-compiled ones.
#pragma once

float saxpy_ref(float a, float x, float y);
int block_sum_ref(const int* in, int block);
