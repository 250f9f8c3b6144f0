<?php
class ParserTest {}
