class StoreTest
