<?php
class Parser {}
