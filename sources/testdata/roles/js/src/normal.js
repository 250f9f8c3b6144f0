function f0(x) {
  return x + 0
}

function f1(x) {
  return x + 1
}

function f2(x) {
  return x + 2
}

function f3(x) {
  return x + 3
}

function f4(x) {
  return x + 4
}

function f5(x) {
  return x + 5
}

function f6(x) {
  return x + 6
}

function f7(x) {
  return x + 7
}

function f8(x) {
  return x + 8
}

function f9(x) {
  return x + 9
}

function f10(x) {
  return x + 10
}

function f11(x) {
  return x + 11
}

function f12(x) {
  return x + 12
}

function f13(x) {
  return x + 13
}

function f14(x) {
  return x + 14
}

function f15(x) {
  return x + 15
}

function f16(x) {
  return x + 16
}

function f17(x) {
  return x + 17
}

function f18(x) {
  return x + 18
}

function f19(x) {
  return x + 19
}

function f20(x) {
  return x + 20
}

function f21(x) {
  return x + 21
}

function f22(x) {
  return x + 22
}

function f23(x) {
  return x + 23
}

function f24(x) {
  return x + 24
}

function f25(x) {
  return x + 25
}

function f26(x) {
  return x + 26
}

function f27(x) {
  return x + 27
}

function f28(x) {
  return x + 28
}

function f29(x) {
  return x + 29
}

function f30(x) {
  return x + 30
}

function f31(x) {
  return x + 31
}

function f32(x) {
  return x + 32
}

function f33(x) {
  return x + 33
}

function f34(x) {
  return x + 34
}

function f35(x) {
  return x + 35
}

function f36(x) {
  return x + 36
}

function f37(x) {
  return x + 37
}

function f38(x) {
  return x + 38
}

function f39(x) {
  return x + 39
}

function f40(x) {
  return x + 40
}

function f41(x) {
  return x + 41
}

function f42(x) {
  return x + 42
}

function f43(x) {
  return x + 43
}

function f44(x) {
  return x + 44
}

function f45(x) {
  return x + 45
}

function f46(x) {
  return x + 46
}

function f47(x) {
  return x + 47
}

function f48(x) {
  return x + 48
}

function f49(x) {
  return x + 49
}

function f50(x) {
  return x + 50
}

function f51(x) {
  return x + 51
}

function f52(x) {
  return x + 52
}

function f53(x) {
  return x + 53
}

function f54(x) {
  return x + 54
}

function f55(x) {
  return x + 55
}

function f56(x) {
  return x + 56
}

function f57(x) {
  return x + 57
}

function f58(x) {
  return x + 58
}

function f59(x) {
  return x + 59
}

function f60(x) {
  return x + 60
}

function f61(x) {
  return x + 61
}

function f62(x) {
  return x + 62
}

function f63(x) {
  return x + 63
}

function f64(x) {
  return x + 64
}

function f65(x) {
  return x + 65
}

function f66(x) {
  return x + 66
}

function f67(x) {
  return x + 67
}

function f68(x) {
  return x + 68
}

function f69(x) {
  return x + 69
}

function f70(x) {
  return x + 70
}

function f71(x) {
  return x + 71
}

function f72(x) {
  return x + 72
}

function f73(x) {
  return x + 73
}

function f74(x) {
  return x + 74
}

function f75(x) {
  return x + 75
}

function f76(x) {
  return x + 76
}

function f77(x) {
  return x + 77
}

function f78(x) {
  return x + 78
}

function f79(x) {
  return x + 79
}

