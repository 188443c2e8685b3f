from ikreport.claims.kernel_names import short_kernel


def test_short_kernel_names():
    assert short_kernel("void flash_fwd_kernel<Traits<128, 64>, true>(Params)") == "flash_fwd_kernel<…>"
    assert short_kernel("Kernel2(bool*,bool*,int)") == "Kernel2"
    assert short_kernel("enable_if<!T7, void>::type kernel<int, float>(T13)") == "kernel<…>"
    assert short_kernel("copy_blocked[v1,cw51cXTLSUwv1sDUaKthrqNgqqmjgOR3W3CwA](Array<long long, 1>)") == "copy_blocked[…]"
    assert len(short_kernel("x" * 200)) == 48
