part of 'parser.dart';
