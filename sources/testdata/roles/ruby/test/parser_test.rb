require 'minitest'
