class StoreUi
